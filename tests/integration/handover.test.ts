import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { configuredSigningKey, verdictJwks } from "@/lib/attestation/signing-key";
import { REGISTER_SIGNING_KEY } from "@/lib/attestation/statements";
import { signingKeyFrom, signJws } from "@/lib/attestation/verdict-jws";
import { run } from "@/lib/db/statement";
import { accrueRunningUsage } from "@/lib/billing/meter";
import { submitAttestation } from "@/lib/attestation/submit-attestation";
import { retireIdentity } from "@/lib/attestation/retire-identity";
import { enrolIdentity } from "@/lib/attestation/enrol-identity";
import { issueNonce } from "@/lib/attestation/issue-nonce";
import { verifyJws } from "@/lib/attestation/verdict-jws";
import { listNodeAttestations } from "@/lib/attestation/verdict-queries";
import { db, pool } from "@/lib/db/client";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { listNodeWorkflows } from "@/lib/fleet/node-workflows";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { advanceHandovers } from "@/lib/handover/run-handovers";
import { recordWipeReport } from "@/lib/handover/record-wipe-report";
import { putHandoverSettings } from "@/lib/handover/settings";
import { startHandover } from "@/lib/handover/start-handover";
import { submitJob } from "@/lib/jobs/submit-job";
import { createReservation } from "@/lib/reservations/create-reservation";
import { maintainReservations } from "@/lib/reservations/maintain-reservations";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { SimulatedTpm } from "../../agent/src/sim-tpm";
import {
  actorFor,
  agentPrincipal,
  asTenantAdmin,
  availableFleet,
  makeCluster,
  makeTenant,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { attestedCluster, driveHandover, FakeNodeAgent, operator } from "../support/handover-agent";
import { codeAndFieldOf, codeOf } from "../support/outcomes";
import { tempDir } from "../support/temp-dir";

// Handover between tenants against the real database: the workflow of leased steps (release,
// wipe, attest), driven by its runner and a node's agent (through the same services the API
// calls), its failures (a device not wiped, no report, a failed attestation, no evidence), the
// tenancy's end starting it, the lease changing hands when a runner stalls, and an operator's
// re-inspection.

async function world(o: Parameters<typeof attestedCluster>[1] & { gpus?: number } = {}) {
  const f = await availableFleet(1, o.gpus ?? 2, "HO");
  const policy = await attestedCluster(f.cluster.id, o);
  const n = f.nodes[0]!;
  const agent = new FakeNodeAgent(
    f.cluster.id,
    n.node.id,
    n.gpus.map((g) => g.uuid),
  );
  return { f, policy, nodeId: n.node.id, agent };
}

const status = async (id: string) =>
  await db().node.findUniqueOrThrow({ where: { id }, select: { status: true, handoverDueSince: true, statusBeforeOffline: true } });
const alertOf = (nodeId: string) =>
  db().alertEvent.findFirst({ where: { nodeId, ruleType: "handover_failed" }, orderBy: { firedAt: "desc" } });

describe("a handover", () => {
  it("releases, wipes and attests a node, step by step under its lease, and only then returns it", async () => {
    const { nodeId, agent, policy } = await world();
    const started = await startHandover(operator, nodeId, { mode: "full" });
    expect(started).toMatchObject({ kind: "handover", status: "running", trigger: "operator" });
    expect((await status(nodeId)).status).toBe("releasing");
    // releasing → wiping: the agent is told to wipe, with the cluster's command
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("wiping");
    const beat = await recordHeartbeat(agent.actor, nodeId, {});
    expect(beat.handover).toMatchObject({
      action: "wipe",
      workflow_id: started.id,
      wipe: { command: "blkdiscard -f /dev/nvme1n1", timeout_s: 1800 },
    });
    // nothing moves without the report
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("wiping");
    expect(await agent.tick()).toBe("wipe");
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("inspecting");
    expect(await agent.tick()).toBe("attest");
    await advanceHandovers({ nodeIds: [nodeId] });
    const after = await status(nodeId);
    expect(after).toMatchObject({ status: "available", handoverDueSince: null });

    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w).toMatchObject({ id: started.id, status: "succeeded" });
    expect(w!.steps.map((s) => [s.name, s.status])).toEqual([
      ["release", "succeeded"],
      ["wipe", "succeeded"],
      ["attest", "succeeded"],
    ]);
    // every step was written under a lease token
    expect(w!.steps.every((s) => s.leaseToken !== null)).toBe(true);
    expect(w!.steps[1]!.details).toMatchObject({
      devices: expect.arrayContaining([expect.objectContaining({ method: "nvidia-smi -r", result: "ok" })]),
    });
    // the verdict: signed, verifiable with the published keys alone, naming its policy and version
    const { data } = await listNodeAttestations(operator.principal, nodeId, { limit: 5 });
    expect(data[0]).toMatchObject({
      result: "pass",
      failures: [],
      policy: policy.name,
      policy_version: 1,
      workflow_id: started.id,
      tpm_kind: "simulated",
    });
    const check = verifyJws(data[0]!.jws, await verdictJwks(pool()));
    expect(check).toMatchObject({
      ok: true,
      payload: { node_id: nodeId, result: "pass", policy: policy.name, policy_version: 1, pcr_digest: data[0]!.pcr_digest },
    });
  });

  it("a device the wipe could not clear quarantines the node, and the alert names it", async () => {
    const { nodeId, agent } = await world();
    agent.wipeFails = [agent.gpuUuids[1]!];
    await startHandover(operator, nodeId, { mode: "full" });
    expect(await driveHandover(agent)).toBe("quarantined");
    const alert = await alertOf(nodeId);
    expect(alert).toMatchObject({ status: "firing", severity: "critical", tenantId: null });
    expect(alert!.message).toContain(agent.gpuUuids[1]!);
    expect(alert!.message).toContain("nvidia-smi -r: GPU is in use");
    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w).toMatchObject({ status: "failed" });
    expect(w!.steps.at(-1)).toMatchObject({ name: "wipe", status: "failed" });
    expect(agent.attested).toBe(0);
  });

  it("no wipe report within the wipe's time limit quarantines the node, naming the devices not confirmed wiped", async () => {
    const { nodeId, agent } = await world({ wipeTimeoutS: 30 });
    await startHandover(operator, nodeId, { mode: "full" });
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("wiping");
    // the node never reports; time passes beyond the limit and its grace
    await pool().query(`UPDATE node_workflow_steps SET started_at = now() - interval '2 minutes' WHERE node_id = $1 AND name = 'wipe'`, [
      nodeId,
    ]);
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("quarantined");
    const alert = await alertOf(nodeId);
    expect(alert!.message).toContain("no wipe report within 30 s");
    for (const uuid of agent.gpuUuids) expect(alert!.message).toContain(uuid);
  });

  it("a failed attestation (an implant) goes attestation_failed → quarantined with the verdict's failures; a re-inspection after the fix returns it", async () => {
    const { nodeId, agent } = await world();
    agent.boot = { implant: true };
    await startHandover(operator, nodeId, { mode: "full" });
    expect(await driveHandover(agent)).toBe("quarantined");
    const events = await db().nodeEvent.findMany({
      where: { nodeId },
      orderBy: { id: "asc" },
      select: { fromStatus: true, toStatus: true, leaseToken: true },
    });
    expect(events.slice(-4).map((e) => e.toStatus)).toEqual(["wiping", "inspecting", "attestation_failed", "quarantined"]);
    expect(events.slice(-4).every((e) => e.leaseToken !== null)).toBe(true);
    const alert = await alertOf(nodeId);
    expect(alert!.message).toContain("policy.pcr.mismatch");
    expect(alert!.message).toContain("event_log.event.unknown");
    // the operator cannot just return it: a handover is due
    expect(await codeOf(changeNodeStatus(operator, nodeId, "available"))).toBe("invalid_transition");
    // still implanted: the re-inspection fails again
    await startHandover(operator, nodeId, { mode: "inspect" });
    expect((await status(nodeId)).status).toBe("inspecting");
    expect(await driveHandover(agent)).toBe("quarantined");
    // the operator reimaged it: clean boot, re-inspected, back in service, the alert resolved
    agent.boot = {};
    await startHandover(operator, nodeId, { mode: "inspect", reason: "reimaged after the implant" });
    expect(await driveHandover(agent)).toBe("available");
    expect(await alertOf(nodeId)).toMatchObject({ status: "resolved" });
    const verdicts = await listNodeAttestations(operator.principal, nodeId, { limit: 10 });
    expect(verdicts.data.map((v) => v.result)).toEqual(["pass", "fail", "fail"]);
  });

  it("no evidence within the attestation's time limit is a signed failing verdict, and the node is quarantined", async () => {
    const { nodeId, agent } = await world({ attestationTimeoutS: 30 });
    await startHandover(operator, nodeId, { mode: "full" });
    await advanceHandovers({ nodeIds: [nodeId] });
    await agent.tick(); // wipes
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("inspecting");
    await pool().query(`UPDATE node_workflow_steps SET started_at = now() - interval '1 minute' WHERE node_id = $1 AND name = 'attest'`, [
      nodeId,
    ]);
    await advanceHandovers({ nodeIds: [nodeId] });
    expect((await status(nodeId)).status).toBe("quarantined");
    const { data } = await listNodeAttestations(operator.principal, nodeId, { limit: 1 });
    expect(data[0]).toMatchObject({ result: "fail", failures: [{ code: "evidence.submission.timeout" }] });
    expect(verifyJws(data[0]!.jws, await verdictJwks(pool())).ok).toBe(true);
  });

  it("with attestation off for the cluster, the node returns after its wipe, without a verdict, and the record says so", async () => {
    const f = await availableFleet(1, 1, "HO");
    const nodeId = f.nodes[0]!.node.id;
    await putHandoverSettings(operator, f.cluster.id, {
      wipe_command: null,
      wipe_timeout_s: 600,
      attestation: "off",
      attestation_policy_id: null,
      attestation_timeout_s: 600,
    });
    const agent = new FakeNodeAgent(
      f.cluster.id,
      nodeId,
      f.nodes[0]!.gpus.map((g) => g.uuid),
    );
    await startHandover(operator, nodeId, { mode: "full" });
    expect(await driveHandover(agent)).toBe("available");
    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w!.steps.at(-1)).toMatchObject({ name: "attest", status: "skipped" });
    expect(w!.outcome).toContain("without attestation");
    expect(agent.attested).toBe(0);
  });

  it("releases work that runs on the node: jobs go back to the queue without spending retries", async () => {
    const { f, nodeId, agent } = await world();
    const t = await makeTenant(16);
    const job = await submitJob(asTenantAdmin(t.id), { name: "x", gpu_count: 1, gpu_type: f.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    await startHandover(operator, nodeId, { mode: "full" });
    await advanceHandovers({ nodeIds: [nodeId] });
    expect(await db().job.findUniqueOrThrow({ where: { id: job.id }, select: { status: true, failures: true } })).toEqual({
      status: "queued",
      failures: 0,
    });
    // nothing is placed on it until it passes
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("queued");
    expect(await driveHandover(agent)).toBe("available");
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
  });

  it("a runner that stalls past its lease loses it: another continues from the recorded steps, and the first changes nothing when it wakes", async () => {
    const { nodeId, agent } = await world();
    await startHandover(operator, nodeId, { mode: "full" });
    await advanceHandovers({ nodeIds: [nodeId], holder: "runner-a" }); // a: release done, the wipe step begun
    const first = await db().nodeLease.findUniqueOrThrow({ where: { nodeId } });
    expect(first.holder).toBe("runner-a");
    await agent.tick(); // the agent reports its wipe
    // runner a stalls: its lease runs out; runner b takes over and continues
    await pool().query(
      `UPDATE node_leases SET renewed_at = acquired_at, expires_at = acquired_at + interval '1 millisecond' WHERE node_id = $1`,
      [nodeId],
    );
    await new Promise((r) => setTimeout(r, 5));
    await advanceHandovers({ nodeIds: [nodeId], holder: "runner-b" });
    const second = await db().nodeLease.findUniqueOrThrow({ where: { nodeId } });
    expect(second).toMatchObject({ holder: "runner-b", token: first.token + 1n });
    expect((await status(nodeId)).status).toBe("inspecting");
    // runner a wakes: its lease is gone and b holds the node; it writes nothing
    expect(await advanceHandovers({ nodeIds: [nodeId], holder: "runner-a" })).toMatchObject({ busy: 1, advanced: 0 });
    await agent.tick();
    await advanceHandovers({ nodeIds: [nodeId], holder: "runner-b" });
    expect((await status(nodeId)).status).toBe("available");
    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w!.steps.map((s) => [s.name, s.leaseToken])).toEqual([
      ["release", String(first.token)],
      ["wipe", String(first.token + 1n)],
      ["attest", String(first.token + 1n)],
    ]);
  });

  it("an operator quarantining the node mid-handover stops it: the workflow is cancelled and the runner leaves it", async () => {
    const { nodeId, agent } = await world();
    await startHandover(operator, nodeId, { mode: "full" });
    await advanceHandovers({ nodeIds: [nodeId] });
    await changeNodeStatus(operator, nodeId, "quarantined", "pulling it for a look");
    expect(await recordHeartbeat(agent.actor, nodeId, {}).then((b) => b.handover)).toBeUndefined();
    expect(await advanceHandovers({ nodeIds: [nodeId] })).toMatchObject({ considered: 0 });
    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w).toMatchObject({ status: "cancelled", outcome: "pulling it for a look" });
    expect(await codeOf(startHandover(operator, nodeId, { mode: "full" }))).toBe("ok");
    expect(await codeOf(startHandover(operator, nodeId, { mode: "full" }))).toBe("conflict");
  });

  it("refuses a handover from where none can start, and wipe reports outside one", async () => {
    const { nodeId, agent } = await world();
    expect(await codeOf(startHandover(operator, nodeId, { mode: "inspect" }))).toBe("invalid_transition");
    const at = new Date().toISOString();
    const report = { devices: [{ device: "GPU-x", method: "nvidia-smi -r", started_at: at, finished_at: at, result: "ok" as const }] };
    expect(await codeOf(recordWipeReport(agent.actor, nodeId, report))).toBe("invalid_transition");
    await startHandover(operator, nodeId, { mode: "full" });
    // still releasing: not at the wipe yet
    expect(await codeOf(recordWipeReport(agent.actor, nodeId, report))).toBe("invalid_transition");
    await advanceHandovers({ nodeIds: [nodeId] });
    expect(await codeOf(recordWipeReport(agent.actor, nodeId, report))).toBe("ok");
    // a retry of the same report is the stored one; a different one is a conflict
    expect(await recordWipeReport(agent.actor, nodeId, report)).toMatchObject({ created: false });
    expect(await codeAndFieldOf(recordWipeReport(agent.actor, nodeId, { devices: [{ ...report.devices[0]!, result: "failed" }] }))).toBe(
      "conflict:devices",
    );
    // another cluster's agent key does not see the node
    const other = await makeCluster();
    expect(await codeOf(recordWipeReport(actorFor(agentPrincipal(other.id)), nodeId, report))).toBe("not_found");
  });
});

describe("attestation keys and nonces", () => {
  it("pins the first key, accepts it again, refuses another with an alert until an operator re-enrols the node", async () => {
    const { nodeId, agent } = await world();
    const first = agent.tpm.identity();
    expect(await enrolIdentity(agent.actor, nodeId, { ...first, tpm_kind: "simulated" })).toMatchObject({ created: true });
    expect(await enrolIdentity(agent.actor, nodeId, { ...first, tpm_kind: "simulated" })).toMatchObject({ created: false });
    const swap = new SimulatedTpm(tempDir("swap-tpm-")).identity();
    expect(await codeAndFieldOf(enrolIdentity(agent.actor, nodeId, { ...swap, tpm_kind: "simulated" }))).toBe("conflict:ak_public_pem");
    const alert = await db().alertEvent.findFirstOrThrow({ where: { nodeId, ruleType: "attestation_key_mismatch" } });
    expect(alert).toMatchObject({ status: "firing", severity: "critical" });
    await retireIdentity(operator, nodeId);
    expect(await enrolIdentity(agent.actor, nodeId, { ...swap, tpm_kind: "simulated" })).toMatchObject({ created: true });
    expect(await db().alertEvent.findUniqueOrThrow({ where: { id: alert.id } })).toMatchObject({ status: "resolved" });
    // the retired key stays on record
    expect(await db().attestationIdentity.count({ where: { nodeId } })).toBe(2);
  });

  it("a nonce is single use: the same evidence sent again is a failing verdict (a replay), never a second pass", async () => {
    const { nodeId, agent } = await world();
    const tpm = agent.tpm;
    await enrolIdentity(agent.actor, nodeId, { ...tpm.identity(), tpm_kind: "simulated" });
    const { measureBoot } = await import("../../agent/src/sim-boot");
    const log = await measureBoot(tpm);
    const n = await issueNonce(agent.actor, nodeId);
    expect(n).toMatchObject({ pcr_bank: "sha256", pcrs: [0, 1, 2, 3, 4, 5, 6, 7] });
    expect(n.nonce).toMatch(/^[0-9a-f]{64}$/);
    const q = tpm.quote(n.nonce, n.pcrs);
    const at = new Date().toISOString();
    const evidence = {
      nonce: n.nonce,
      tpm: { quote: q.quote, signature: q.signature, pcrs: q.pcrs },
      event_log: log,
      wipe_report: { devices: [{ device: "GPU-0", method: "nvidia-smi -r", started_at: at, finished_at: at, result: "ok" as const }] },
    };
    const results = await Promise.all([submitAttestation(agent.actor, nodeId, evidence), submitAttestation(agent.actor, nodeId, evidence)]);
    expect(results.map((r) => r.result).sort()).toEqual(["fail", "pass"]);
    expect(results.find((r) => r.result === "fail")!.failures).toEqual([expect.objectContaining({ code: "nonce.value.reused" })]);
    // a malformed quote is a 400 naming it, and spends nothing
    const n2 = await issueNonce(agent.actor, nodeId);
    expect(
      await codeAndFieldOf(
        submitAttestation(agent.actor, nodeId, {
          ...evidence,
          nonce: n2.nonce,
          tpm: { ...evidence.tpm, quote: Buffer.from("garbage, not a TPMS_ATTEST") },
        }),
      ),
    ).toBe("validation_failed:tpm.quote");
    expect(await db().attestationNonce.findUniqueOrThrow({ where: { nonce: n2.nonce } })).toMatchObject({ usedAt: null });
    // another cluster's agent cannot take a nonce for this node, or send its evidence
    const other = await makeCluster();
    expect(await codeOf(issueNonce(actorFor(agentPrincipal(other.id)), nodeId))).toBe("not_found");
    expect(await codeOf(submitAttestation(actorFor(agentPrincipal(other.id)), nodeId, { ...evidence, nonce: n2.nonce }))).toBe("not_found");
    // nor can a key bound to another node of the same cluster
    expect(await codeOf(issueNonce(actorFor(agentPrincipal(agent.clusterId, "00000000-0000-4000-8000-000000000001")), nodeId))).toBe(
      "not_found",
    );
  });
});

describe("verdicts and the keys they are signed with", () => {
  it("the key set keeps every key that signed: a verdict signed before a rotation still verifies; keys and verdicts are append-only", async () => {
    const { nodeId, agent } = await world();
    await startHandover(operator, nodeId, { mode: "full" });
    expect(await driveHandover(agent)).toBe("available");
    // a key this deployment signed with before its current one
    const retired = signingKeyFrom(randomBytes(32));
    await run(pool(), REGISTER_SIGNING_KEY, [retired.kid, JSON.stringify(retired.publicJwk)]);
    const old = signJws({ iss: "gpuforge", node_id: nodeId, result: "pass", failures: [] }, retired);
    const jwks = await verdictJwks(pool());
    expect(jwks.keys[0]!.kid).toBe(configuredSigningKey()!.kid);
    expect(jwks.keys.map((k) => k.kid)).toContain(retired.kid);
    expect(jwks.keys.every((k) => !("d" in k))).toBe(true);
    expect(verifyJws(old, jwks)).toMatchObject({ ok: true });
    const { data } = await listNodeAttestations(operator.principal, nodeId, { limit: 1 });
    expect(verifyJws(data[0]!.jws, jwks)).toMatchObject({ ok: true, header: { kid: configuredSigningKey()!.kid } });
    // the database refuses a private part, and any change to a key or a verdict
    await expect(
      pool().query(
        `INSERT INTO attestation_signing_keys (kid, public_jwk) VALUES ('k', '{"kty":"OKP","crv":"Ed25519","kid":"k","x":"a","d":"secret"}')`,
      ),
    ).rejects.toMatchObject({ code: "23514" });
    await expect(pool().query(`DELETE FROM attestation_signing_keys WHERE kid = $1`, [retired.kid])).rejects.toMatchObject({
      code: "23514",
    });
    await expect(
      pool().query(`UPDATE attestations SET result = 'pass', failures = '[]' WHERE node_id = $1`, [nodeId]),
    ).rejects.toMatchObject({ code: "23514" });
    await expect(pool().query(`DELETE FROM attestations WHERE node_id = $1`, [nodeId])).rejects.toMatchObject({ code: "23514" });
    await expect(pool().query(`UPDATE node_wipe_reports SET result = 'ok' WHERE node_id = $1`, [nodeId])).rejects.toMatchObject({
      code: "23514",
    });
    // a pass cannot carry failures, nor a fail none
    await expect(
      pool().query(
        `INSERT INTO attestations (node_id, result, failures, kid, jws, created_at) VALUES ($1, 'pass', '[{"code":"x"}]', $2, 'a.b.c', now())`,
        [nodeId, configuredSigningKey()!.kid],
      ),
    ).rejects.toMatchObject({ code: "23514" });
  });
});

describe("when a whole-node tenancy ends", () => {
  it("the node is handed over before the next tenant gets it, whose holding begins (and is billed) from the handover's end", async () => {
    const { f, nodeId, agent } = await world();
    const a = await makeTenant(64);
    const b = await makeTenant(64);
    const now = Date.now();
    const first = await createReservation(asTenantAdmin(a.id), {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now + 60_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    const next = await createReservation(asTenantAdmin(b.id), {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now + 3_600_000).toISOString(),
      ends_at: new Date(now + 7_200_000).toISOString(),
    });
    // an hour passes: a's reservation ends at the moment b's begins
    const c = await pool().connect();
    try {
      await c.query("BEGIN");
      await c.query("SET LOCAL session_replication_role = replica");
      await c.query(`UPDATE reservation_nodes SET starts_at = now() - interval '1 hour', ends_at = now() WHERE reservation_id = $1`, [
        first.id,
      ]);
      await c.query(`UPDATE reservations SET starts_at = now() - interval '1 hour', ends_at = now(), status = 'active' WHERE id = $1`, [
        first.id,
      ]);
      await c.query(`UPDATE reservation_nodes SET starts_at = now(), ends_at = now() + interval '1 hour' WHERE reservation_id = $1`, [
        next.id,
      ]);
      await c.query(`UPDATE reservations SET starts_at = now(), ends_at = now() + interval '1 hour' WHERE id = $1`, [next.id]);
      await c.query("COMMIT");
    } finally {
      c.release();
    }
    await maintainReservations();
    const s = await status(nodeId);
    expect(s.status).toBe("releasing");
    expect(s.handoverDueSince).not.toBeNull();
    const [w] = await listNodeWorkflows(pool(), nodeId, 1);
    expect(w).toMatchObject({ trigger: "tenancy_ended", status: "running" });
    // b's work waits: the node is not in service yet
    const job = await submitJob(asTenantAdmin(b.id), {
      name: "b",
      gpu_count: 1,
      gpu_type: f.gpuType,
      priority: 5,
      max_retries: 0,
      reservation_id: next.id,
    });
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("queued");
    // b's reservation is not short of its node: no repair, no swap
    expect((await db().reservation.findUniqueOrThrow({ where: { id: next.id } })).degradedAt).toBeNull();
    const heldFrom = (await db().reservationNode.findFirstOrThrow({ where: { reservationId: next.id } })).startsAt;
    await new Promise((r) => setTimeout(r, 50));
    // the meter bills nothing for a holding whose node is still in its handover
    await accrueRunningUsage({ tenantId: b.id, prepaidEveryS: 0, invoiceEveryS: 0 });
    expect(await db().usageEvent.count({ where: { reservationId: next.id } })).toBe(0);
    expect(await driveHandover(agent)).toBe("available");
    const holding = await db().reservationNode.findFirstOrThrow({ where: { reservationId: next.id } });
    expect(holding.startsAt.getTime()).toBeGreaterThan(heldFrom.getTime());
    // from now on it is billed, from the moment it was handed over
    await new Promise((r) => setTimeout(r, 20));
    await accrueRunningUsage({ tenantId: b.id, prepaidEveryS: 0, invoiceEveryS: 0 });
    const billed = await db().usageEvent.findFirstOrThrow({ where: { reservationId: next.id } });
    expect(billed.startedAt.getTime()).toBe(holding.startsAt.getTime());
    await runSchedulerCycle("test");
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
    // the tenant that received the node sees its verdict; another tenant does not
    expect((await listNodeAttestations(tenantAdminPrincipal(b.id), nodeId, { limit: 5 })).data[0]).toMatchObject({ result: "pass" });
    const stranger = await makeTenant(1);
    expect(await codeOf(listNodeAttestations(tenantAdminPrincipal(stranger.id), nodeId, { limit: 5 }))).toBe("not_found");
  });

  it("a reserved node that left service mid-tenancy owes a handover: it returns to service only through one", async () => {
    const { f, nodeId } = await world();
    const t = await makeTenant(64);
    const now = Date.now();
    await createReservation(asTenantAdmin(t.id), {
      gpu_type: f.gpuType,
      node_count: 1,
      starts_at: new Date(now + 1000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 1100));
    await changeNodeStatus(operator, nodeId, "maintenance", "fan swap");
    await maintainReservations();
    expect((await status(nodeId)).handoverDueSince).not.toBeNull();
    expect(await codeOf(changeNodeStatus(operator, nodeId, "available"))).toBe("invalid_transition");
    expect(await codeOf(startHandover(operator, nodeId, { mode: "full", reason: unique("back") }))).toBe("ok");
  });
});
