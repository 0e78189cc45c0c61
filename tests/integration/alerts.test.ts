import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAlertRule, updateAlertRule } from "@/lib/alerts/alert-rules";
import { MAX_DELIVERY_ATTEMPTS } from "@/lib/alerts/delivery-policy";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { deliverNotifications, enqueueNotifications, type ChannelConfig } from "@/lib/alerts/notification-outbox";
import { acknowledgeAlert } from "@/lib/alerts/acknowledge-alert";
import { listAlerts } from "@/lib/alerts/queries";
import { retryNotification } from "@/lib/alerts/retry-notification";
import { remediateNodes } from "@/lib/alerts/remediate-nodes";
import { localBus } from "@/lib/background/local-bus";
import { db, pool } from "@/lib/db/client";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import {
  actorFor,
  agentPrincipal,
  inventory,
  makeCluster,
  makeTenant,
  operatorPrincipal,
  sweepUntilOffline,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";
import { takeAlertEvaluationTurn, takeOutboxTurn } from "../support/test-turns";

// Alert evaluation reads the whole fleet, so every rule here is scoped to a cluster of its own
// test, and the seeded fleet-wide rules are switched off for this file (the only one that evaluates).
const operator = actorFor(operatorPrincipal);
const console_: ChannelConfig = { emailFrom: "alerts@test", emailTo: [], publicUrl: "http://gpuforge.test" };

async function fleet(nodes: number, gpusPerNode = 8) {
  const cluster = await makeCluster();
  const gpuType = unique("A").replace(/-/g, "").slice(0, 12).toUpperCase();
  const out = [];
  for (let i = 0; i < nodes; i++) {
    const inv = inventory(gpusPerNode, gpuType);
    const r = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("n"), gpus: inv });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), r.node.id, {});
    out.push({ ...r, inv });
  }
  return { cluster, gpuType, nodes: out };
}

async function fatalXid(clusterId: string, nodeId: string, uuid: string, xid = 79) {
  await recordHeartbeat(actorFor(agentPrincipal(clusterId)), nodeId, { gpus: [{ uuid, healthy: true, xid_errors: [xid] }] });
}

async function rule(clusterId: string, over: Parameters<typeof createAlertRule>[1] | object) {
  return createAlertRule(operator, {
    name: unique("rule"),
    severity: "critical",
    enabled: true,
    notify: true,
    auto_remediate: false,
    cluster_id: clusterId,
    ...over,
  } as never);
}

const firingOf = (ruleId: string) => db().alertEvent.findMany({ where: { ruleId, status: "firing" } });
const nodeStatus = async (id: string) => (await db().node.findUniqueOrThrow({ where: { id } })).status;

let releaseEvaluation: (() => Promise<void>) | undefined;
beforeAll(async () => {
  // the fleet-wide rules are off in this database (tests/support/database-global-setup.ts)
  releaseEvaluation = await takeAlertEvaluationTurn();
});
afterAll(async () => {
  await releaseEvaluation?.();
});

beforeEach(async () => {
  // each test counts its own quarantines against the cap
  await pool().query(`DELETE FROM remediations`);
});

describe("rules", () => {
  it("checks every knob against the rule's type and names the fields", async () => {
    const c = await makeCluster();
    const e = await rule(c.id, { rule_type: "gpu_temperature", threshold: 400, occurrences: 0, window_s: 30 }).catch((x) => x);
    expect(e.code).toBe("validation_failed");
    expect(e.details.map((d: { path: string }) => d.path).sort()).toEqual(["occurrences", "threshold", "window_s"]);
    expect((await rule(c.id, { rule_type: "idle_gpu", auto_remediate: true }).catch((x) => x)).details).toEqual([
      { path: "auto_remediate", message: expect.any(String) },
    ]);
    expect((await rule("00000000-0000-4000-8000-000000000000", { rule_type: "gpu_xid" }).catch((x) => x)).details).toEqual([
      { path: "cluster_id", message: "No such cluster" },
    ]);
    const ok = await rule(c.id, { rule_type: "gpu_temperature" });
    expect(ok).toMatchObject({ threshold: 90, windowS: 600, occurrences: 3, firing: 0 });
    expect(await codeOf(rule(c.id, { rule_type: "gpu_xid", name: ok.name }))).toBe("conflict");
    // an update is checked merged with what the rule already says
    expect(await codeOf(updateAlertRule(operator, ok.id, { window_s: 120 }))).toBe("validation_failed");
    expect(await updateAlertRule(operator, ok.id, { window_s: 900, threshold: 85 })).toMatchObject({ windowS: 900, threshold: 85 });
    expect(await codeOf(updateAlertRule(actorFor(tenantAdminPrincipal(c.id)), ok.id, { enabled: false }))).toBe("forbidden");
  });
});

describe("evaluation", () => {
  it("fires once per rule and subject, refreshes while it holds, resolves when it clears", async () => {
    const { cluster, nodes } = await fleet(1);
    const r = await rule(cluster.id, { rule_type: "gpu_xid" });
    const n = nodes[0]!;
    await fatalXid(cluster.id, n.node.id, n.inv[2]!.uuid);
    const first = await evaluateAlerts();
    expect(first.fired).toBeGreaterThanOrEqual(1);
    const firing = await firingOf(r.id);
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ subjectType: "gpu", nodeId: n.node.id, severity: "critical", details: { xid: 79 } });
    // evaluating again, even by two evaluators at once, never makes a second event
    await Promise.all([evaluateAlerts(), evaluateAlerts()]);
    const again = await firingOf(r.id);
    expect(again.map((e) => e.id)).toEqual([firing[0]!.id]);
    expect(again[0]!.lastSeenAt.getTime()).toBeGreaterThanOrEqual(firing[0]!.lastSeenAt.getTime());
    // an operator inspects and returns the node: the GPU is cleared, the event resolves
    await changeNodeStatus(operator, n.node.id, "quarantined", "inspecting");
    await changeNodeStatus(operator, n.node.id, "available", "GPU reseated");
    await evaluateAlerts();
    expect(await firingOf(r.id)).toEqual([]);
    const resolved = await db().alertEvent.findUniqueOrThrow({ where: { id: firing[0]!.id } });
    expect(resolved.status).toBe("resolved");
    expect(resolved.resolvedAt).not.toBeNull();
    // announced twice: when it fired and when it resolved (the console: no channel configured here)
    const notes = await db().notification.findMany({ where: { alertEventId: firing[0]!.id } });
    expect(notes.map((x) => x.kind).sort()).toEqual(["firing", "resolved"]);
  });

  it("the database refuses a second firing event for the same rule and subject", async () => {
    const { cluster } = await fleet(1);
    const r = await rule(cluster.id, { rule_type: "node_unreachable", window_s: 60 });
    const insert = () =>
      pool().query(
        `INSERT INTO alert_events (rule_id, rule_type, dedupe_key, subject_type, subject_id, subject_label, severity, message) VALUES ($1, 'node_unreachable', $2, 'node', 'x', 'x', 'critical', 'm')`,
        [r.id, `${r.id}:node:x`],
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: "23505" });
  });

  it("temperature fires only when repeated; unreachable nodes fire, nodes in maintenance do not", async () => {
    const { cluster, nodes } = await fleet(2);
    const hot = await rule(cluster.id, { rule_type: "gpu_temperature", threshold: 90, window_s: 600, occurrences: 3 });
    const silent = await rule(cluster.id, { rule_type: "node_unreachable", window_s: 60, severity: "warning" });
    const [a, b] = nodes;
    const gpuA = a!.gpus[0]!.id;
    const gpuB = b!.gpus[0]!.id;
    // three hot minutes on A's GPU, one spike on B's
    await pool().query(
      `INSERT INTO gpu_metrics_1m (gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max, temperature_sum, temperature_max, power_sum, power_max)
       SELECT g, date_trunc('minute', now()) - make_interval(mins => m), 1, 90, 90, 1, 1, t, t, 300, 300
         FROM (VALUES ($1::uuid, 1, 95), ($1::uuid, 2, 96), ($1::uuid, 3, 97), ($2::uuid, 1, 99), ($2::uuid, 2, 60)) AS v(g, m, t)`,
      [gpuA, gpuB],
    );
    await pool().query(`UPDATE nodes SET last_heartbeat_at = now() - interval '2 minutes' WHERE id = $1`, [b!.node.id]);
    await evaluateAlerts();
    expect((await firingOf(hot.id)).map((e) => e.subjectId)).toEqual([gpuA]);
    expect((await firingOf(silent.id)).map((e) => e.subjectId)).toEqual([b!.node.id]);
    await changeNodeStatus(operator, b!.node.id, "maintenance", "power work");
    await evaluateAlerts();
    expect(await firingOf(silent.id)).toEqual([]);
  });

  it("an operator sends an offline node to maintenance: its unreachable alert resolves, and it comes back in maintenance", async () => {
    const { cluster, nodes } = await fleet(1);
    const silent = await rule(cluster.id, { rule_type: "node_unreachable", window_s: 60, severity: "warning" });
    const n = nodes[0]!;
    await pool().query(`UPDATE nodes SET last_heartbeat_at = now() - interval '10 minutes' WHERE id = $1`, [n.node.id]);
    await sweepUntilOffline(n.node.id); // this sweep, or another test file's on the shared database
    expect(await nodeStatus(n.node.id)).toBe("offline");
    await evaluateAlerts();
    expect((await firingOf(silent.id)).map((e) => e.subjectId)).toEqual([n.node.id]);
    // draining or returning it waits for the node; maintenance applies now and when it returns
    expect(await codeOf(changeNodeStatus(operator, n.node.id, "draining"))).toBe("invalid_transition");
    // the change wakes alert evaluation (here the test evaluates; in the app, the driver does)
    const wakes: string[] = [];
    const onEvent = (e: { name: string; data: { reason?: string } }) =>
      void (e.name === "alerts/evaluate.requested" && wakes.push(e.data.reason ?? ""));
    localBus.on("event", onEvent);
    try {
      const off = await changeNodeStatus(operator, n.node.id, "maintenance", "PSU replacement");
      expect(off).toMatchObject({ status: "offline", statusBeforeOffline: "maintenance" });
    } finally {
      localBus.off("event", onEvent);
    }
    expect(wakes).toEqual(["node maintenance"]);
    await evaluateAlerts();
    expect(await firingOf(silent.id)).toEqual([]);
    const events = await db().nodeEvent.findMany({ where: { nodeId: n.node.id }, orderBy: { id: "asc" } });
    expect(events.map((e) => [e.fromStatus, e.toStatus])).toEqual([
      ["registered", "available"],
      ["available", "offline"],
      ["offline", "maintenance"],
    ]);
    const audit = await db().auditLog.findFirstOrThrow({ where: { targetId: n.node.id, action: "node.maintenance" } });
    expect(audit.details).toMatchObject({ from: "offline", to: "offline", returns_as: "maintenance", reason: "PSU replacement" });
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), n.node.id, {});
    expect(await nodeStatus(n.node.id)).toBe("maintenance");
  });

  it("idle capacity counts only GPUs observed idle for most of the window", async () => {
    const { cluster, nodes } = await fleet(1, 4);
    const r = await rule(cluster.id, { rule_type: "idle_gpu", threshold: 50, window_s: 600, severity: "info" });
    const gpus = nodes[0]!.gpus.map((g) => g.id);
    const minutes = async (ids: string[], count: number, util: number) =>
      pool().query(
        `INSERT INTO gpu_metrics_1m (gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max, temperature_sum, temperature_max, power_sum, power_max)
         SELECT g, date_trunc('minute', now()) - make_interval(mins => m), 1, $3::real, $3::real, 1, 1, 40, 40, 100, 100 FROM unnest($1::uuid[]) g, generate_series(0, $2::int - 1) m
         ON CONFLICT DO NOTHING`,
        [ids, count, util],
      );
    // just registered: two minutes of data say nothing about ten minutes of idleness
    await minutes(gpus, 2, 1);
    await evaluateAlerts();
    expect(await firingOf(r.id)).toEqual([]);
    // eight idle minutes on three GPUs, one busy: 3 of 4 idle, above the 50 % threshold
    await minutes(gpus.slice(0, 3), 8, 1);
    await minutes(gpus.slice(3), 8, 90);
    await evaluateAlerts();
    const [e] = await firingOf(r.id);
    expect(e).toMatchObject({ subjectType: "cluster", subjectId: cluster.id, details: { gpus_idle: 3, gpus_in_service: 4 } });
  });

  it("idle allocations tell the tenant that pays for them; disabling a rule resolves its events", async () => {
    const { cluster, gpuType, nodes } = await fleet(1);
    const r = await rule(cluster.id, { rule_type: "idle_allocation", threshold: 5, window_s: 600, severity: "warning" });
    const t = await makeTenant(8);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "notebook",
      gpu_count: 2,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    expect((await getJobOrThrow(operatorPrincipal, job.id)).status).toBe("running");
    await pool().query(`UPDATE jobs SET started_at = now() - interval '20 minutes' WHERE id = $1`, [job.id]);
    const held = (await db().gpu.findMany({ where: { allocatedJobId: job.id } })).map((g) => g.id);
    await pool().query(
      `INSERT INTO gpu_metrics_1m (gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max, temperature_sum, temperature_max, power_sum, power_max)
       SELECT g, date_trunc('minute', now()) - make_interval(mins => m), 2, 4, 3, 1, 1, 80, 40, 100, 50 FROM unnest($1::uuid[]) g, generate_series(0, 10) m`,
      [held],
    );
    await evaluateAlerts();
    const [event] = await firingOf(r.id);
    expect(event).toMatchObject({ subjectType: "job", subjectId: job.id, tenantId: t.id });
    // the tenant sees it, without the fleet's ids; another tenant does not
    const mine = await listAlerts(tenantAdminPrincipal(t.id), { limit: 50 });
    expect(mine.data.map((a) => a.id)).toEqual([event!.id]);
    const other = await makeTenant(1);
    expect((await listAlerts(tenantAdminPrincipal(other.id), { limit: 50 })).data).toEqual([]);
    expect(nodes).toHaveLength(1);
    await updateAlertRule(operator, r.id, { enabled: false });
    await evaluateAlerts();
    expect(await firingOf(r.id)).toEqual([]);
    // acknowledging records the first operator and keeps it
    const acked = await acknowledgeAlert(operator, event!.id);
    expect(acked.acknowledgedBy).toBe("test operator");
    const again = await acknowledgeAlert(actorFor({ kind: "operator", label: "someone else" }), event!.id);
    expect(again.acknowledgedBy).toBe("test operator");
  });
});

describe("automatic remediation", () => {
  it("a fatal XID under a running job quarantines the node, requeues the job without spending retries, and it runs elsewhere", async () => {
    const { cluster, gpuType, nodes } = await fleet(3);
    await rule(cluster.id, { rule_type: "gpu_xid", auto_remediate: true });
    const t = await makeTenant(16);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "train",
      gpu_count: 8,
      gpu_type: gpuType,
      priority: 1,
      max_retries: 0,
    });
    await runSchedulerCycle("test");
    const running = await getJobOrThrow(operatorPrincipal, job.id);
    expect(running.status).toBe("running");
    const victim = nodes.find((n) => n.gpus.some((g) => running.gpus.some((rg) => rg.id === g.id)))!;
    const gpu = victim.inv[victim.gpus.findIndex((g) => running.gpus.some((rg) => rg.id === g.id))]!;
    await fatalXid(cluster.id, victim.node.id, gpu.uuid);

    const summary = await evaluateAlerts({ remediation: { cap: 5, windowS: 600 } });
    expect(summary.remediation.quarantined.map((q) => q.node_id)).toEqual([victim.node.id]);
    expect(await nodeStatus(victim.node.id)).toBe("quarantined");
    const requeued = await getJobOrThrow(operatorPrincipal, job.id);
    expect(requeued).toMatchObject({ status: "queued", failures: 0 });
    const rem = await db().remediation.findFirstOrThrow({ where: { nodeId: victim.node.id } });
    expect(rem).toMatchObject({ outcome: "quarantined", cause: "fatal_xid:79", jobsRequeued: 1 });
    expect(rem.alertEventId).not.toBeNull();
    const ev = await db().nodeEvent.findFirstOrThrow({ where: { nodeId: victim.node.id, toStatus: "quarantined" } });
    expect(ev.actor).toBe("remediation");
    // the tenant is told its job moved
    const told = await listAlerts(tenantAdminPrincipal(t.id), { limit: 50, rule_type: "job_moved" });
    expect(told.data).toHaveLength(1);
    expect(told.data[0]!.status).toBe("firing");

    await runSchedulerCycle("test");
    const again = await getJobOrThrow(operatorPrincipal, job.id);
    expect(again.status).toBe("running");
    expect(again.gpus.every((g) => g.nodeId !== victim.node.id)).toBe(true);
    // once it runs again the tenant's alert resolves; the node is not remediated twice
    const later = await evaluateAlerts({ remediation: { cap: 5, windowS: 600 } });
    expect(later.remediation.quarantined).toEqual([]);
    expect((await db().alertEvent.findUniqueOrThrow({ where: { id: told.data[0]!.id } })).status).toBe("resolved");
    expect(await db().remediation.count({ where: { nodeId: victim.node.id } })).toBe(1);
  });

  it("a decision made on facts read before an operator returned the node does not quarantine it again", async () => {
    const { cluster, nodes } = await fleet(1, 2);
    const [n] = nodes;
    await rule(cluster.id, { rule_type: "gpu_xid", auto_remediate: true });
    await fatalXid(cluster.id, n!.node.id, n!.inv[0]!.uuid);
    // a pass read the fault…
    const stale = [{ node_id: n!.node.id, cause: "fatal_xid:79", summary: `XID 79 on ${n!.node.hostname}`, alert_event_id: null }];
    expect((await remediateNodes(stale, { cap: 50, windowS: 600 })).quarantined).toHaveLength(1);
    // …the operator inspects the GPU and returns the node, which clears the GPU's fault…
    await changeNodeStatus(operator, n!.node.id, "available", "GPU reseated");
    expect(await nodeStatus(n!.node.id)).toBe("available");
    // …and a remediator acting on what it had read before must not undo that
    expect(await remediateNodes(stale, { cap: 50, windowS: 600 })).toMatchObject({ quarantined: [], capped: [] });
    expect(await nodeStatus(n!.node.id)).toBe("available");
    // a new fatal XID after the return is a new fault, and is acted on
    await fatalXid(cluster.id, n!.node.id, n!.inv[1]!.uuid);
    expect((await remediateNodes(stale, { cap: 50, windowS: 600 })).quarantined).toHaveLength(1);
  });

  it("parallel remediators never quarantine more than the cap; the rest raise critical alerts for a human", async () => {
    const { cluster, nodes } = await fleet(12, 1);
    for (const n of nodes) await fatalXid(cluster.id, n.node.id, n.inv[0]!.uuid);
    const faults = nodes.map((n) => ({
      node_id: n.node.id,
      cause: "fatal_xid:79",
      summary: `XID 79 on ${n.node.hostname}`,
      alert_event_id: null,
    }));
    // four app instances deciding at once, each seeing every fault in its own order
    const outcomes = await Promise.all(
      [0, 1, 2, 3].map((i) => remediateNodes([...faults.slice(i * 3), ...faults.slice(0, i * 3)], { cap: 5, windowS: 600 })),
    );
    const quarantined = outcomes.flatMap((o) => o.quarantined.map((q) => q.node_id));
    const capped = outcomes.flatMap((o) => o.capped.map((q) => q.node_id));
    expect(quarantined).toHaveLength(5);
    expect(new Set(quarantined).size).toBe(5);
    expect(capped).toHaveLength(7);
    expect(new Set([...quarantined, ...capped]).size).toBe(12);
    const statuses = await db().node.groupBy({ by: ["status"], where: { clusterId: cluster.id }, _count: { _all: true } });
    expect(Object.fromEntries(statuses.map((s) => [s.status, s._count._all]))).toEqual({ quarantined: 5, available: 7 });
    const humans = await db().alertEvent.findMany({ where: { ruleType: "remediation_capped", clusterId: cluster.id, status: "firing" } });
    expect(humans).toHaveLength(7);
    expect(humans.every((h) => h.severity === "critical")).toBe(true);
    // a human must hear about it whatever the rule says
    expect(await db().notification.count({ where: { alertEventId: { in: humans.map((h) => h.id) } } })).toBe(7);
    // asking again changes nothing: each node was decided once
    const again = await remediateNodes(faults, { cap: 50, windowS: 600 });
    expect(again).toMatchObject({ quarantined: [], capped: [] });
    // the operator quarantines one capped node by hand: its alert resolves at the next evaluation
    await changeNodeStatus(operator, capped[0]!, "quarantined", "inspected");
    await evaluateAlerts();
    expect((await db().alertEvent.findFirstOrThrow({ where: { ruleType: "remediation_capped", nodeId: capped[0]! } })).status).toBe(
      "resolved",
    );
  });
});

describe("notification outbox", () => {
  let server: http.Server;
  let webhookUrl = "";
  const received: Array<{ text: string; gpuforge: { notification_id: string } }> = [];
  let failuresLeft = 0;
  // a test that stopped half-way must not leave the next one's first deliveries failing
  beforeEach(() => {
    failuresLeft = 0;
  });
  let smtp: SMTPServer;
  let smtpPort = 0;
  const mails: string[] = [];

  let releaseOutbox: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    releaseOutbox = await takeOutboxTurn();
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (failuresLeft > 0) {
          failuresLeft--;
          res.writeHead(503).end("down");
          return;
        }
        received.push(JSON.parse(body));
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/SECRET`;
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData(stream, _session, cb) {
        let raw = "";
        stream.on("data", (c) => (raw += c));
        stream.on("end", () => (mails.push(raw), cb()));
      },
    });
    await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
  }, 600_000);

  afterAll(async () => {
    await releaseOutbox?.();
    server.close();
    await new Promise<void>((r) => smtp.close(r));
  });

  async function firingEvent() {
    const { cluster, nodes } = await fleet(1, 1);
    const r = await rule(cluster.id, { rule_type: "gpu_xid", notify: false });
    await fatalXid(cluster.id, nodes[0]!.node.id, nodes[0]!.inv[0]!.uuid);
    await evaluateAlerts();
    return (await firingOf(r.id))[0]!;
  }
  const makeDue = (ids: string[]) =>
    pool().query(
      `UPDATE notifications SET next_attempt_at = now() - interval '1 second' WHERE id = ANY($1::uuid[]) AND status = 'pending'`,
      [ids],
    );

  it("delivers by email and webhook; a channel that is down delays a notification, never loses it", async () => {
    const event = await firingEvent();
    const cfg: ChannelConfig = { ...console_, smtpUrl: `smtp://127.0.0.1:${smtpPort}`, emailTo: ["oncall@example.test"], webhookUrl };
    expect(await enqueueNotifications([event.id], "firing", cfg)).toBe(2);
    expect(await enqueueNotifications([event.id], "firing", cfg)).toBe(0); // once per channel
    const rows = await db().notification.findMany({ where: { alertEventId: event.id } });
    expect(rows.find((r) => r.channel === "webhook")!.target).toBe(`webhook 127.0.0.1:${new URL(webhookUrl).port}`); // the secret path is never stored
    failuresLeft = 2;
    const ids = rows.map((r) => r.id);
    // the outbox is the whole database's: other files' notifications may be due too, so what this
    // test checks is its own two rows, not the deliverer's totals
    const mine = async () =>
      Object.fromEntries(
        (await db().notification.findMany({ where: { alertEventId: event.id } })).map((n) => [n.channel, [n.status, n.attempts]]),
      );
    const first = await deliverNotifications(cfg);
    expect(first.sent).toBeGreaterThanOrEqual(1);
    expect(first.retried).toBeGreaterThanOrEqual(1);
    expect(await mine()).toEqual({ email: ["sent", 1], webhook: ["pending", 1] });
    const waiting = await db().notification.findFirstOrThrow({ where: { alertEventId: event.id, channel: "webhook" } });
    expect(waiting).toMatchObject({ status: "pending", attempts: 1, lastError: "webhook answered HTTP 503" });
    expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(Date.now()); // backing off
    await deliverNotifications(cfg);
    expect(await mine()).toEqual({ email: ["sent", 1], webhook: ["pending", 1] }); // not due yet: not tried again
    await makeDue(ids);
    await deliverNotifications(cfg);
    await makeDue(ids);
    await deliverNotifications(cfg);
    const done = await db().notification.findMany({ where: { alertEventId: event.id } });
    expect(done.map((d) => [d.channel, d.status, d.attempts]).sort((x, y) => String(x[0]).localeCompare(String(y[0])))).toEqual([
      ["email", "sent", 1],
      ["webhook", "sent", 3],
    ]);
    expect(received.filter((r) => r.gpuforge.notification_id === waiting.id)).toHaveLength(1);
    expect(received.at(-1)!.text).toMatch(/^\[GPUForge\] FIRING critical/);
    expect(mails.some((m) => m.includes("oncall@example.test") && m.includes("FIRING critical"))).toBe(true);
  });

  it("parallel deliverers send each notification once", async () => {
    const cfg: ChannelConfig = { ...console_, webhookUrl };
    const events = await Promise.all([firingEvent(), firingEvent(), firingEvent()]);
    await enqueueNotifications(
      events.map((e) => e.id),
      "firing",
      cfg,
    );
    const before = received.length;
    await Promise.all([deliverNotifications(cfg), deliverNotifications(cfg), deliverNotifications(cfg)]);
    const ids = (await db().notification.findMany({ where: { alertEventId: { in: events.map((e) => e.id) } } })).map((n) => n.id);
    const got = received
      .slice(before)
      .map((r) => r.gpuforge.notification_id)
      .filter((id) => ids.includes(id));
    expect(got.sort()).toEqual([...ids].sort());
  });

  it("after every attempt failed it stays listed as failed, and an operator can send it again", async () => {
    const event = await firingEvent();
    const cfg: ChannelConfig = { ...console_, webhookUrl };
    await enqueueNotifications([event.id], "firing", cfg);
    const n = await db().notification.findFirstOrThrow({ where: { alertEventId: event.id } });
    failuresLeft = 1_000;
    for (let i = 0; i < MAX_DELIVERY_ATTEMPTS; i++) {
      await makeDue([n.id]);
      await deliverNotifications(cfg);
    }
    expect(await db().notification.findUniqueOrThrow({ where: { id: n.id } })).toMatchObject({
      status: "failed",
      attempts: MAX_DELIVERY_ATTEMPTS,
    });
    failuresLeft = 0;
    const retried = await retryNotification(operator, n.id);
    expect(retried).toMatchObject({ status: "pending", attempts: 0 });
    await deliverNotifications(cfg);
    expect(await db().notification.findUniqueOrThrow({ where: { id: n.id } })).toMatchObject({ status: "sent" });
    expect(await codeOf(retryNotification(operator, n.id))).toBe("conflict");
  });
});
