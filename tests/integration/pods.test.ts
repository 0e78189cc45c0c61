import { describe, expect, it } from "vitest";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { accrueRunningUsage, enforcePrepaidBalances } from "@/lib/billing/meter";
import { generateInvoice } from "@/lib/billing/generate-invoice";
import { depositFunds } from "@/lib/billing/ledger";
import { db, pool } from "@/lib/db/client";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { submitJob } from "@/lib/jobs/submit-job";
import { changePodState, type PodAction } from "@/lib/pods/change-pod-state";
import { createPod } from "@/lib/pods/create-pod";
import { listPodEvents, getPodOrThrow } from "@/lib/pods/queries";
import { reconcilePods } from "@/lib/pods/reconcile-pods";
import { reportPodStatus } from "@/lib/pods/report-pod-status";
import { createPodBody, type CreatePodInput } from "@/lib/pods/schemas";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createTenant } from "@/lib/tenants/create-tenant";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { appendPodLogs } from "@/lib/workload-logs/append-logs";
import { readPodLogs } from "@/lib/workload-logs/queries";
import { systemActor } from "@/lib/auth/principal";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeTenant,
  operatorPrincipal,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeAndFieldOf } from "../support/outcomes";
import { inAlertEvaluationTurn } from "../support/test-turns";

// Pods hold GPUs through the same allocator, quota and database guarantees as jobs and replicas,
// are placed by the same scheduler, and are billed per second while they run.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W walk@laptop";

function spec(gpuType: string, o: Partial<Record<keyof CreatePodInput, unknown>> = {}): CreatePodInput {
  return createPodBody.parse({ name: unique("pod"), gpu_type: gpuType, gpu_count: 1, image: "runpod/pytorch:2.4.0", ...o });
}

async function placement(podId: string) {
  const p = await db().pod.findUniqueOrThrow({ where: { id: podId }, select: { attempts: true, fence: true, nodeId: true, status: true } });
  return { attempt: p.attempts, fence: p.fence!, nodeId: p.nodeId!, status: p.status };
}

/** The agent of the pod's node says its container runs, publishing each port on 40000 + port. */
async function runOnNode(clusterId: string, podId: string) {
  const pl = await placement(podId);
  const beat = await recordHeartbeat(actorFor(agentPrincipal(clusterId)), pl.nodeId, {});
  const a = beat.assignments.find((x) => x.kind === "pod" && x.pod_id === podId);
  if (!a || a.kind !== "pod") throw new Error("the heartbeat did not assign the pod");
  await reportPodStatus(agentPrincipal(clusterId), podId, {
    attempt: a.attempt,
    fence: a.fence,
    status: "running",
    ports: a.ports.map((port) => ({ container_port: port, host_port: 40_000 + port })),
  });
  return a;
}

async function invariants(gpuType: string) {
  const { rows } = await pool().query<{ two_holders: number; short: number; holding_idle: number }>(
    `SELECT (SELECT count(*) FROM gpus WHERE gpu_type = $1 AND num_nonnulls(allocated_job_id, allocated_replica_id, allocated_pod_id) > 1)::int AS two_holders,
            (SELECT count(*) FROM pods p WHERE p.gpu_type = $1 AND p.status IN ('starting', 'running')
               AND (SELECT count(*) FROM gpus g WHERE g.allocated_pod_id = p.id) <> p.gpu_count)::int AS short,
            (SELECT count(*) FROM pods p WHERE p.gpu_type = $1 AND p.status NOT IN ('starting', 'running')
               AND EXISTS (SELECT 1 FROM gpus g WHERE g.allocated_pod_id = p.id))::int AS holding_idle`,
    [gpuType],
  );
  return rows[0]!;
}

async function inUse(tenantId: string): Promise<number> {
  const { rows } = await pool().query<{ in_use: number }>(
    `SELECT COALESCE((SELECT in_use FROM tenant_gpus_in_use(ARRAY[$1::uuid])), 0) AS in_use`,
    [tenantId],
  );
  return rows[0]!.in_use;
}

describe("pods: lifecycle through the scheduler and the agent", () => {
  it("pending → starting → running → stopping → stopped → pending → … → terminated, every transition recorded, fenced reports", async () => {
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const { cluster, gpuType, nodes } = await availableFleet(2, 4, "P");
    // the nodes' addresses, as their agents report them (what SSH commands name)
    for (const n of nodes)
      await pool().query(`UPDATE nodes SET address = $2 WHERE id = $1`, [
        n.node.id,
        `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`,
      ]);
    const pod = await createPod(asT, spec(gpuType, { gpu_count: 2, ports: [8888], ssh_public_key: SSH_KEY }));
    expect(pod).toMatchObject({
      status: "pending",
      ports: [
        { container_port: 22, host_port: null },
        { container_port: 8888, host_port: null },
      ],
      ssh_command: null,
    });
    expect(pod.ssh_key_fingerprint).toMatch(/^SHA256:/);

    await runSchedulerCycle("test");
    const first = await placement(pod.id);
    expect(first).toMatchObject({ status: "starting", attempt: 1 });
    expect((await invariants(gpuType)).short).toBe(0);

    // the node runs it as a long-lived container with its ports and key, then reports its host ports
    const a = await runOnNode(cluster.id, pod.id);
    expect(a).toMatchObject({
      image: "runpod/pytorch:2.4.0",
      ports: [22, 8888],
      ssh_public_key: SSH_KEY,
      status_path: `/api/pods/${pod.id}/status`,
    });
    expect(a.gpu_ids).toHaveLength(2);
    const running = await getPodOrThrow(asT.principal, pod.id);
    expect(running).toMatchObject({
      status: "running",
      ports: [
        { container_port: 22, host_port: 40_022 },
        { container_port: 8888, host_port: 48_888 },
      ],
    });
    const host = (await db().node.findUniqueOrThrow({ where: { id: first.nodeId } })).address;
    // its HTTP port answers only the gateway or an SSH tunnel, which the command opens
    expect(running).toMatchObject({ host, ssh_command: `ssh root@${host} -p 40022 -L 8888:localhost:8888` });

    // its log, fenced like every report
    await appendPodLogs(agentPrincipal(cluster.id), pod.id, {
      attempt: a.attempt,
      fence: a.fence,
      chunks: [{ seq: 0, stream: "stdout", text: "sshd listening on 22\n" }],
    });
    expect((await readPodLogs(asT.principal, pod.id, { limit: 50 })).data.map((c) => c.text)).toEqual(["sshd listening on 22\n"]);

    // stop: GPUs back at once, the node no longer runs it, then confirms
    expect((await changePodState(asT, pod.id, "stop")).status).toBe("stopping");
    expect(await inUse(t.id)).toBe(0);
    const beat = await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), first.nodeId, {});
    expect(beat.assignments.some((x) => x.kind === "pod" && x.pod_id === pod.id)).toBe(false);
    await reportPodStatus(agentPrincipal(cluster.id), pod.id, { attempt: a.attempt, fence: a.fence, status: "stopped" });
    expect((await getPodOrThrow(asT.principal, pod.id)).status).toBe("stopped");
    expect(await codeAndFieldOf(changePodState(asT, pod.id, "stop"))).toBe("invalid_transition");

    // start: placed again with a new placement; the old one's reports are stale now
    expect((await changePodState(asT, pod.id, "start")).status).toBe("pending");
    await runSchedulerCycle("test");
    const second = await placement(pod.id);
    expect(second).toMatchObject({ status: "starting", attempt: 2 });
    expect(second.fence).not.toBe(first.fence);
    expect(
      await codeAndFieldOf(
        reportPodStatus(agentPrincipal(cluster.id), pod.id, { attempt: 1, fence: first.fence, status: "exited", exit_code: 1 }),
      ),
    ).toBe("stale_report");
    expect(
      await codeAndFieldOf(
        appendPodLogs(agentPrincipal(cluster.id), pod.id, {
          attempt: 1,
          fence: first.fence,
          chunks: [{ seq: 1, stream: "stdout", text: "late\n" }],
        }),
      ),
    ).toBe("stale_report");

    expect((await changePodState(asT, pod.id, "terminate")).status).toBe("terminated");
    expect(await codeAndFieldOf(changePodState(asT, pod.id, "start"))).toBe("invalid_transition");
    expect(await inUse(t.id)).toBe(0);
    const history = (await listPodEvents(asT.principal, pod.id)).reverse().map((e) => `${e.from_status ?? ""}→${e.to_status}`);
    expect(history).toEqual([
      "→pending",
      "pending→starting",
      "starting→running",
      "running→stopping",
      "stopping→stopped",
      "stopped→pending",
      "pending→starting",
      "starting→terminated",
    ]);
    // another tenant sees nothing of it
    expect(await codeAndFieldOf(getPodOrThrow(tenantAdminPrincipal((await makeTenant(2)).id), pod.id))).toBe("not_found");
  });

  it("a container that exits fails the pod; restart_on_failure places it again", async () => {
    const { cluster, gpuType } = await availableFleet(1, 2, "P");
    const t = await makeTenant(4);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const once = await createPod(asT, spec(gpuType));
    const again = await createPod(asT, spec(gpuType, { restart_on_failure: true }));
    await runSchedulerCycle("test");
    for (const id of [once.id, again.id]) {
      const a = await runOnNode(cluster.id, id);
      await reportPodStatus(agentPrincipal(cluster.id), id, {
        attempt: a.attempt,
        fence: a.fence,
        status: "exited",
        exit_code: 137,
        error: "OOMKilled",
      });
    }
    expect(await getPodOrThrow(asT.principal, once.id)).toMatchObject({
      status: "failed",
      status_reason: "its container ended: OOMKilled",
    });
    expect((await getPodOrThrow(asT.principal, again.id)).status).toBe("pending");
    await runSchedulerCycle("test");
    expect((await placement(again.id)).attempt).toBe(2);
    expect(await invariants(gpuType)).toEqual({ two_holders: 0, short: 0, holding_idle: 0 });
  });

  it("refuses what could never run (422), a taken name (409), a suspended tenant (403)", async () => {
    const { gpuType } = await availableFleet(1, 4, "P");
    const t = await makeTenant(6);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    expect(await codeAndFieldOf(createPod(asT, spec(gpuType, { gpu_count: 5 })))).toBe("unsatisfiable:gpu_count");
    expect(await codeAndFieldOf(createPod(asT, spec("NOSUCHTYPE")))).toBe("unsatisfiable:gpu_type");
    const small = await makeTenant(1);
    expect(await codeAndFieldOf(createPod(actorFor(tenantAdminPrincipal(small.id)), spec(gpuType, { gpu_count: 2 })))).toBe(
      "unsatisfiable:gpu_count",
    );
    const p = await createPod(asT, spec(gpuType));
    expect(await codeAndFieldOf(createPod(asT, spec(gpuType, { name: p.name })))).toBe("conflict:name");
    expect(await codeAndFieldOf(createPod(actorFor(operatorPrincipal), spec(gpuType)))).toBe("validation_failed:tenant_id");
    await updateTenant(actorFor(operatorPrincipal), t.id, { status: "suspended" });
    expect(await codeAndFieldOf(createPod(asT, spec(gpuType)))).toBe("forbidden");
  });
});

/**
 * Makes these pods' starts and stops a day old, so the sweep treats them as late: moving its clock
 * instead would fail or stop every other file's starting and stopping pods too.
 */
async function ageByADay(podIds: string[]) {
  await pool().query(`UPDATE pod_placements SET started_at = started_at - interval '1 day' WHERE pod_id = ANY($1::uuid[])`, [podIds]);
  await pool().query(`UPDATE pods SET updated_at = updated_at - interval '1 day' WHERE id = ANY($1::uuid[])`, [podIds]);
}

describe("pods: parallel create, stop and start", () => {
  it("never exceed the tenant's quota nor hold a GPU twice, with jobs of the same tenant competing", async () => {
    const { gpuType } = await availableFleet(2, 4, "Q");
    const t = await makeTenant(5);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const pods = await Promise.all(Array.from({ length: 6 }, (_, i) => createPod(asT, spec(gpuType, { gpu_count: 1 + (i % 2) }))));
    await submitJob(asT, { name: unique("j"), gpu_count: 2, gpu_type: gpuType, priority: 5, max_retries: 0 });
    const actions: PodAction[] = ["stop", "start", "terminate"];
    for (let round = 0; round < 8; round++) {
      await Promise.all([
        ...pods.map((p, i) => changePodState(asT, p.id, actions[(round + i) % 2]!).catch(() => null)),
        runSchedulerCycle(`round ${round}`),
        runSchedulerCycle(`round ${round} again`),
        ...(round === 6 ? [changePodState(asT, pods[0]!.id, "terminate").catch(() => null)] : []),
      ]);
      expect(await inUse(t.id)).toBeLessThanOrEqual(5);
      expect(await invariants(gpuType)).toEqual({ two_holders: 0, short: 0, holding_idle: 0 });
    }
    // and once everything settles (stops confirmed), work is placed up to the quota and no further
    await ageByADay(pods.map((p) => p.id));
    await reconcilePods();
    await Promise.all(pods.map((p) => changePodState(asT, p.id, "start").catch(() => null)));
    await runSchedulerCycle("settle");
    expect(await inUse(t.id)).toBeLessThanOrEqual(5);
    expect(await inUse(t.id)).toBeGreaterThanOrEqual(4);
    // the database itself refuses a second holder and an over-quota pod, whatever the code does
    const holder = await pool().query<{ id: string; allocated_pod_id: string }>(
      `SELECT id, allocated_pod_id FROM gpus WHERE gpu_type = $1 AND allocated_pod_id IS NOT NULL LIMIT 1`,
      [gpuType],
    );
    const job = await db().job.findFirst({ where: { gpuType }, select: { id: true } });
    expect(
      await codeAndFieldOf(pool().query(`UPDATE gpus SET allocated_job_id = $2 WHERE id = $1`, [holder.rows[0]!.id, job!.id])),
    ).toMatch(/23514|check/);
  });
});

describe("pods: billing", () => {
  it("bills each running span once, tiling it exactly over accruals and stop/start cycles", async () => {
    const { cluster, gpuType } = await availableFleet(1, 2, "B");
    await pool().query(
      `INSERT INTO gpu_rates (gpu_type, cents_per_hour, effective_from, created_by) VALUES ($1, 360000, now() - interval '1 day', 'test')`,
      [gpuType],
    );
    const t = await makeTenant(2);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const pod = await createPod(asT, spec(gpuType, { gpu_count: 2 }));
    for (let cycle = 0; cycle < 3; cycle++) {
      if (cycle > 0) await changePodState(asT, pod.id, "start");
      await runSchedulerCycle("billing");
      const a = await runOnNode(cluster.id, pod.id);
      await sleep(400);
      await accrueRunningUsage({ tenantId: t.id, invoiceEveryS: 0 });
      await Promise.all([
        accrueRunningUsage({ tenantId: t.id, invoiceEveryS: 0 }),
        accrueRunningUsage({ tenantId: t.id, invoiceEveryS: 0 }),
      ]);
      await sleep(300);
      await changePodState(asT, pod.id, "stop");
      await reportPodStatus(agentPrincipal(cluster.id), pod.id, { attempt: a.attempt, fence: a.fence, status: "stopped" });
    }
    const { rows: spans } = await pool().query<{ attempt: number; running_at: Date; ended_at: Date }>(
      `SELECT attempt, running_at, ended_at FROM pod_placements WHERE pod_id = $1 ORDER BY attempt`,
      [pod.id],
    );
    const { rows: segs } = await pool().query<{
      attempt: number;
      kind: string;
      started_at: Date;
      ended_at: Date;
      gpu_count: number;
      gpu_seconds: string;
      amount_cents: string;
    }>(
      `SELECT attempt, kind, started_at, ended_at, gpu_count, gpu_seconds::text, amount_cents::text FROM usage_events WHERE pod_id = $1 ORDER BY started_at`,
      [pod.id],
    );
    expect(spans).toHaveLength(3);
    for (const span of spans) {
      const mine = segs.filter((s) => s.attempt === span.attempt);
      // contiguous, from the container's start to the stop, the last one final and only it
      expect(mine[0]!.started_at.getTime()).toBe(span.running_at.getTime());
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.started_at.getTime()).toBe(mine[i - 1]!.ended_at.getTime());
      expect(mine.at(-1)!.ended_at.getTime()).toBe(span.ended_at.getTime());
      expect(mine.map((s) => s.kind)).toEqual([...mine.slice(0, -1).map(() => "accrual"), "final"]);
      expect(mine.every((s) => s.gpu_count === 2)).toBe(true);
    }
    // nothing billed between spans (stopped time is free), and the amounts follow the rate
    const billedMs = segs.reduce((s, x) => s + (x.ended_at.getTime() - x.started_at.getTime()), 0);
    expect(billedMs).toBe(spans.reduce((s, x) => s + (x.ended_at.getTime() - x.running_at.getTime()), 0));
    for (const s of segs) expect(Number(s.amount_cents)).toBe(Math.round((Number(s.gpu_seconds) * 360000) / 3600));
    // the database refuses a second bill for any second of the pod
    const first = segs[0]!;
    expect(
      await codeAndFieldOf(
        pool().query(
          `INSERT INTO usage_events (tenant_id, pod_id, attempt, kind, settlement, gpu_type, gpu_count, started_at, ended_at, gpu_seconds, cents_per_hour, amount_cents)
           VALUES ($1, $2, 3, 'accrual', 'invoice', $3, 2, $4, $5, 1, 0, 0)`,
          [t.id, pod.id, gpuType, first.started_at, first.ended_at],
        ),
      ),
    ).not.toBe("ok");
    const total = segs.reduce((s, x) => s + Number(x.amount_cents), 0);
    expect((await getPodOrThrow(asT.principal, pod.id)).cost_cents).toBe(total);
    // the invoice has one line for the pod, every run of it, and bills none of it twice
    const period = { period_start: new Date(spans[0]!.running_at.getTime() - 1000).toISOString(), period_end: new Date().toISOString() };
    const invoice = await generateInvoice(systemActor, t.id, period);
    expect(Number(invoice.amountCents)).toBe(total);
    expect(invoice.lines.map((l) => [l.podId, l.description, Number(l.amountCents)])).toEqual([
      [pod.id, `Pod ${pod.name} (2 × ${gpuType})`, total],
    ]);
    expect(
      await codeAndFieldOf(generateInvoice(systemActor, t.id, { period_start: period.period_start, period_end: new Date().toISOString() })),
    ).toBe("nothing_to_invoice");
  });

  it("a prepaid tenant at zero has its running pod stopped after the grace period, and no pending pod placed", async () => {
    const { cluster, gpuType } = await availableFleet(1, 2, "B");
    const t = await createTenant(systemActor, { name: unique("prepaid"), gpu_quota: 2, billing_email: null, billing_mode: "prepaid" });
    await depositFunds(systemActor, t.id, 1);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const pod = await createPod(asT, spec(gpuType));
    await runSchedulerCycle("prepaid");
    await runOnNode(cluster.id, pod.id);
    await pool().query(
      `INSERT INTO gpu_rates (gpu_type, cents_per_hour, effective_from, created_by) VALUES ($1, 3600000, now() - interval '1 day', 'test')`,
      [gpuType],
    );
    // a second of two GPUs at this rate is far more than the cent deposited
    await sleep(1_100);
    await accrueRunningUsage({ tenantId: t.id, prepaidEveryS: 0 });
    await enforcePrepaidBalances(3600);
    expect((await getPodOrThrow(asT.principal, pod.id)).status).toBe("running");
    const waiting = await createPod(asT, spec(gpuType));
    // past the grace: this tenant's zero made two hours old (a grace of 0 would stop every other
    // file's prepaid tenant at zero too)
    await pool().query(`UPDATE tenants SET balance_exhausted_at = now() - interval '2 hours' WHERE id = $1`, [t.id]);
    await enforcePrepaidBalances(3600);
    expect((await getPodOrThrow(asT.principal, pod.id)).status).toBe("stopping");
    await runSchedulerCycle("prepaid");
    expect(await getPodOrThrow(asT.principal, waiting.id)).toMatchObject({ status: "pending" });
  });
});

describe("pods: a node that leaves service", () => {
  it("quarantine interrupts the pod (failed, the tenant alerted) unless it asked for restart on failure", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(2, 2, "L");
    const t = await makeTenant(4);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const stay = await createPod(asT, spec(gpuType, { gpu_count: 2 }));
    await runSchedulerCycle("loss");
    const where = (await placement(stay.id)).nodeId;
    await runOnNode(cluster.id, stay.id);
    const move = await createPod(asT, spec(gpuType, { gpu_count: 1, restart_on_failure: true }));
    await runSchedulerCycle("loss");
    expect((await placement(move.id)).nodeId).not.toBe(where);
    // the other node hosts the restartable pod; now both nodes are lost in turn
    await changeNodeStatus(actorFor(operatorPrincipal), where, "quarantined", "bad GPU");
    expect(await getPodOrThrow(asT.principal, stay.id)).toMatchObject({ status: "failed" });
    const alert = await db().alertEvent.findFirst({ where: { ruleType: "pod_interrupted", subjectId: stay.id, status: "firing" } });
    expect(alert).toMatchObject({ tenantId: t.id, subjectType: "pod" });
    const other = nodes.find((n) => n.node.id !== where)!.node.id;
    await changeNodeStatus(actorFor(operatorPrincipal), where, "available", "repaired");
    await changeNodeStatus(actorFor(operatorPrincipal), other, "maintenance", "firmware");
    expect((await getPodOrThrow(asT.principal, move.id)).status).toBe("pending");
    await runSchedulerCycle("loss");
    expect(await placement(move.id)).toMatchObject({ status: "starting", nodeId: where, attempt: 2 });
    // the tenant starts the failed pod again: the alert resolves
    await changePodState(asT, stay.id, "start");
    await inAlertEvaluationTurn(() => evaluateAlerts());
    expect((await db().alertEvent.findUniqueOrThrow({ where: { id: alert!.id } })).status).toBe("resolved");
    expect(await invariants(gpuType)).toEqual({ two_holders: 0, short: 0, holding_idle: 0 });
  });

  it("the sweep fails a pod whose container never came up and finishes a stop its node never confirmed", async () => {
    const { gpuType } = await availableFleet(1, 2, "L");
    const t = await makeTenant(2);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const never = await createPod(asT, spec(gpuType));
    const unconfirmed = await createPod(asT, spec(gpuType));
    await runSchedulerCycle("sweep");
    await changePodState(asT, unconfirmed.id, "stop");
    await ageByADay([never.id, unconfirmed.id]);
    await reconcilePods();
    expect((await getPodOrThrow(asT.principal, never.id)).status).toBe("failed");
    expect((await getPodOrThrow(asT.principal, unconfirmed.id)).status).toBe("stopped");
  });
});

describe("pods: what a compromised node can and cannot do", () => {
  it("another node's key, another cluster, foreign ports and privileged host ports are refused; nothing changes", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(2, 2, "C");
    const t = await makeTenant(2);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const pod = await createPod(asT, spec(gpuType, { gpu_count: 2, ports: [8888] }));
    await runSchedulerCycle("hostile");
    const pl = await placement(pod.id);
    const neighbour = nodes.find((n) => n.node.id !== pl.nodeId)!.node.id;
    const ref = { attempt: pl.attempt, fence: pl.fence };
    const ports = [{ container_port: 8888, host_port: 48888 }];
    // a key bound to the neighbour node, and an agent of another cluster
    expect(await codeAndFieldOf(reportPodStatus(agentPrincipal(cluster.id, neighbour), pod.id, { ...ref, status: "running", ports }))).toBe(
      "not_found",
    );
    const elsewhere = await availableFleet(1, 1, "C");
    expect(await codeAndFieldOf(reportPodStatus(agentPrincipal(elsewhere.cluster.id), pod.id, { ...ref, status: "running", ports }))).toBe(
      "not_found",
    );
    const own = agentPrincipal(cluster.id, pl.nodeId);
    expect(
      await codeAndFieldOf(
        reportPodStatus(own, pod.id, { ...ref, fence: "00000000-0000-4000-8000-000000000000", status: "running", ports }),
      ),
    ).toBe("stale_report");
    expect(
      await codeAndFieldOf(
        reportPodStatus(own, pod.id, { ...ref, status: "running", ports: [{ container_port: 5432, host_port: 45432 }] }),
      ),
    ).toBe("validation_failed:ports[0].container_port");
    expect(
      await codeAndFieldOf(reportPodStatus(own, pod.id, { ...ref, status: "running", ports: [{ container_port: 8888, host_port: 22 }] })),
    ).toBe("validation_failed:ports[0].host_port");
    expect(await codeAndFieldOf(reportPodStatus(own, pod.id, { ...ref, status: "running", ports: [] }))).toBe("validation_failed:ports");
    expect((await placement(pod.id)).status).toBe("starting");
    expect(await codeAndFieldOf(reportPodStatus(own, pod.id, { ...ref, status: "running", ports }))).toBe("ok");
    expect((await placement(pod.id)).status).toBe("running");
  });

  it("a node's address is an IP literal of its own, never a name, link-local or another node's", async () => {
    const { cluster } = await availableFleet(1, 1, "A");
    const agent = actorFor(agentPrincipal(cluster.id));
    const reg = (address: string) =>
      registerNode(agent, { hostname: unique("addr"), address, capabilities: { containers: true }, gpus: inventory(1, "ADDRTEST") });
    expect(await codeAndFieldOf(reg("169.254.169.254"))).toBe("validation_failed:address");
    expect(await codeAndFieldOf(reg("fe80::1"))).toBe("validation_failed:address");
    expect(await codeAndFieldOf(reg("0.0.0.0"))).toBe("validation_failed:address");
    const ip = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    expect((await reg(ip)).node.address).toBe(ip);
    expect(await codeAndFieldOf(reg(ip))).toBe("conflict:address");
  });
});
