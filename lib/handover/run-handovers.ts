import "server-only";
import { systemActorFor } from "@/lib/auth/principal";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import { failure } from "@/lib/attestation/failures";
import { recordVerdict } from "@/lib/attestation/record-verdict";
import { configuredSigningKey, signingKeyOrThrow } from "@/lib/attestation/signing-key";
import { LATEST_VERDICT_OF_WORKFLOW, LIVE_IDENTITY } from "@/lib/attestation/statements";
import { policyForNode } from "@/lib/attestation/node-policy";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, pool, txClient, type Tx } from "@/lib/db/client";
import { run, runOne, type RowOf } from "@/lib/db/statement";
import { isAppError } from "@/lib/errors";
import { requeueJobsOnNodes } from "@/lib/jobs/requeue-lost-jobs";
import { logger } from "@/lib/logger";
import { interruptPodsOnNodes } from "@/lib/pods/interrupt-pods";
import { FENCE_NODE_LEASE as FENCE } from "@/lib/fleet/lease-statements";
import { acquireNodeLease, isStaleLease, releaseNodeLease, renewNodeLease, workerId, type NodeLease } from "@/lib/fleet/node-lease";
import { isHandoverStatus } from "@/lib/fleet/node-lifecycle";
import {
  advanceNodeWithLease,
  beginWorkflowStep,
  finishNodeWorkflow,
  finishWorkflowStep,
  getNodeWorkflow,
  runningWorkflows,
} from "@/lib/fleet/node-workflows";
import type { DurableStep } from "@/lib/background/types";
import { FIRE_HANDOVER_ALERT, RESOLVE_NODE_ALERT } from "./alert-statements";
import { handoverSettingsOf } from "./settings";
import { NODE_FOR_HANDOVER, START_HOLDINGS_AFTER_HANDOVER, WIPE_REPORT_OF_WORKFLOW } from "./statements";

// The handover runner: a background job (lib/background/registry, "fleet-handovers") that moves
// every running handover one step on whenever it can, holding the node's lease while it does
// (lib/fleet/node-lease.ts): every write it makes carries the lease's token, so a runner that
// stalls past its lease and comes back changes nothing, while another has taken over from the
// steps recorded so far. It also runs the inspection of provisioning workflows, once their own
// runner has let go of the node after its "booted" step.
//
//   releasing   stop whatever still runs on the node (jobs requeued, pods interrupted, replicas
//               moved by their reconciler); released once nothing holds a GPU      → wiping
//   wiping      wait for the agent's wipe report: all devices ok                   → inspecting
//               a device failed, or no report within the wipe timeout              → quarantined
//   inspecting  wait for the agent's evidence and the verdict on it: pass          → available
//               fail, or no evidence within the attestation timeout               → attestation_failed
//   attestation_failed                                                              → quarantined
//
// A failure alerts the operators, naming the devices or the verdict's failures; a pass resolves
// the node's handover alert. Holdings that began while the node was in its handover begin (and
// are billed) from its end: the next tenant pays only for a node it could use.

const LEASE_TTL_MS = 60_000;
/** the agent enforces the wipe's time limit itself; this much more covers its report's way here */
const WIPE_REPORT_GRACE_S = 60;
/** what still runs on a node being released is stopped in seconds; past this something is stuck */
const RELEASE_TIMEOUT_S = 900;

const heldByHolder = new Map<string, Map<string, NodeLease>>();

export interface HandoverPass {
  considered: number;
  advanced: number;
  finished: number;
  waiting: number;
  /** workflows another worker holds the lease of */
  busy: number;
}

type Workflow = NonNullable<Awaited<ReturnType<typeof getNodeWorkflow>>>;
type Outcome = "waiting" | "advanced" | "finished";

const direct: DurableStep = { run: (_id, fn) => fn() };

/**
 * One pass over every running handover (and provisioning inspection), or those of `nodeIds`. With
 * Inngest each workflow's move is a durable step of its own; in-process, a plain call. `holder`
 * names the worker (tests run two at once).
 */
export async function advanceHandovers(
  opts: { holder?: string; step?: DurableStep; nodeIds?: readonly string[] } = {},
): Promise<HandoverPass> {
  const holder = opts.holder ?? workerId("handovers");
  const step = opts.step ?? direct;
  const held = heldByHolder.get(holder) ?? new Map<string, NodeLease>();
  heldByHolder.set(holder, held);
  const pass: HandoverPass = { considered: 0, advanced: 0, finished: 0, waiting: 0, busy: 0 };
  const only = opts.nodeIds ? new Set(opts.nodeIds) : null;
  const ids = await step.run("list-running-workflows", async () =>
    [...(await runningWorkflows(pool(), "handover", 500)), ...(await runningWorkflows(pool(), "provisioning", 500))]
      .filter((w) => !only || only.has(w.nodeId))
      .map((w) => w.id),
  );
  if (!only) for (const id of held.keys()) if (!ids.includes(id)) held.delete(id);
  for (const id of ids) {
    const outcome = await step.run(`advance-${id}`, () => advanceOne(id, holder, held));
    if (outcome === "skipped") continue;
    pass.considered++;
    pass[outcome]++;
  }
  return pass;
}

/** Moves one workflow on if this worker holds (or can take) its node's lease. */
async function advanceOne(id: string, holder: string, held: Map<string, NodeLease>): Promise<Outcome | "busy" | "skipped"> {
  const w = await getNodeWorkflow(pool(), id);
  if (!w || w.status !== "running") return "skipped";
  const node = await runOne(pool(), NODE_FOR_HANDOVER, [w.nodeId]);
  if (!node) return "skipped";
  const at = node.status === "offline" ? (node.status_before_offline ?? "offline") : node.status;
  // a provisioning is its own runner's until its node is inspected
  if (w.kind === "provisioning" && at !== "inspecting" && at !== "attestation_failed") return "skipped";
  const lease = await leaseFor(held, w, holder);
  if (!lease) return "busy";
  try {
    const outcome = await moveOn(w, lease, node, at);
    if (outcome === "finished") {
      held.delete(w.id);
      await releaseNodeLease(pool(), lease);
    }
    return outcome;
  } catch (e) {
    held.delete(w.id);
    if (isStaleLease(e)) {
      logger.info("a handover's lease was taken over; leaving it to its new holder", { workflow: w.id, node: w.nodeId });
      return "busy";
    }
    logger.error("a handover step failed; retrying on the next pass", { workflow: w.id, node: w.nodeId, error: String(e) });
    await releaseNodeLease(pool(), lease).catch(() => {});
    return "waiting";
  }
}

async function leaseFor(held: Map<string, NodeLease>, w: Workflow, holder: string): Promise<NodeLease | null> {
  const mine = held.get(w.id);
  if (mine) {
    const renewed = await renewNodeLease(pool(), mine, LEASE_TTL_MS);
    if (renewed) {
      held.set(w.id, renewed);
      return renewed;
    }
    held.delete(w.id);
  }
  const lease = await acquireNodeLease(pool(), { nodeId: w.nodeId, purpose: w.kind, workflowId: w.id, holder, ttlMs: LEASE_TTL_MS });
  if (lease) held.set(w.id, lease);
  return lease;
}

type NodeRow = RowOf<typeof NODE_FOR_HANDOVER>;

async function moveOn(w: Workflow, lease: NodeLease, node: NodeRow, at: string): Promise<Outcome> {
  switch (at) {
    case "releasing":
      return release(w, lease, node);
    case "wiping":
      return wipe(w, lease, node);
    case "inspecting":
      return inspect(w, lease, node);
    case "attestation_failed":
      return fail(w, lease, node, { step: "attest", message: "the node's attestation failed", failures: [] });
    default: {
      // an operator moved the node out of the handover without its workflow ending (it would have been cancelled)
      if (isHandoverStatus(at)) return "waiting";
      await finishNodeWorkflow(pool(), lease, w.id, { status: "failed", outcome: `the node left the handover (it is ${node.status})` });
      return "finished";
    }
  }
}

/** The step of this name the workflow is in (taken over from another holder if it began it), or a new one. */
async function current(w: Workflow, lease: NodeLease, name: string, details: Record<string, unknown> = {}) {
  const running = w.steps.find((s) => s.name === name && s.status === "running");
  if (running) return { id: running.id, startedAt: running.startedAt };
  const s = await beginWorkflowStep(pool(), lease, { workflowId: w.id, name, details });
  if (!s) throw new Error(`workflow ${w.id} is no longer running`);
  return { id: s.id, startedAt: s.started_at };
}

/** Since when nobody could use the node: the end of the tenancy that started the handover, or the handover's own start. */
const unusableSince = (w: Workflow): Date =>
  typeof w.details.tenancy_ended_at === "string" ? new Date(w.details.tenancy_ended_at) : w.startedAt;

const elapsedS = (since: Date) => (Date.now() - since.getTime()) / 1000;

async function release(w: Workflow, lease: NodeLease, node: NodeRow): Promise<Outcome> {
  const s = await current(w, lease, "release");
  const actor = lease.holder;
  const moved = await db().$transaction(async (tx) => {
    // the lease is checked (and held) before anything moves: a stale runner stops here
    await run(tx, FENCE, [lease.nodeId, lease.token]);
    const jobs = await requeueJobsOnNodes(tx, [node.id], "its node is being handed over (released, wiped and inspected)", actor);
    const pods = await interruptPodsOnNodes(
      txClient(tx),
      [node.id],
      "its node is being handed over (released, wiped and inspected)",
      actor,
    );
    return { jobs: jobs.length, pods: pods.length };
  });
  if (moved.jobs || moved.pods) await emitEvent("scheduler/run.requested", { reason: "work moved off a node in handover" });
  const now = await runOne(pool(), NODE_FOR_HANDOVER, [node.id]);
  if ((now?.allocated ?? 0) > 0) {
    await emitEvent("endpoints/reconcile.requested", { reason: "a node in handover still holds replicas" });
    if (elapsedS(s.startedAt) < RELEASE_TIMEOUT_S) return "waiting";
    return fail(w, lease, node, {
      step: "release",
      stepId: s.id,
      message: `work still held ${now!.allocated} GPU(s) of the node ${RELEASE_TIMEOUT_S} s after the handover began`,
      failures: [],
    });
  }
  const settings = await handoverSettingsOf(pool(), node.cluster_id);
  await finishWorkflowStep(pool(), lease, s.id, {
    status: "succeeded",
    message: "nothing runs on the node any more",
    details: { jobs_requeued: moved.jobs, pods_interrupted: moved.pods },
  });
  const t = await db().$transaction((tx) => advanceNodeWithLease(tx, lease, { kind: "workflow", step: "released" }, "handover: released"));
  if (!t.ok) return "waiting";
  await beginWorkflowStep(pool(), lease, {
    workflowId: w.id,
    name: "wipe",
    message: settings.wipe_command
      ? "waiting for the agent's wipe report"
      : "waiting for the agent's GPU resets (the cluster has no wipe command)",
    details: { command: settings.wipe_command, timeout_s: settings.wipe_timeout_s, devices: node.gpus },
  });
  return "advanced";
}

interface Device {
  device: string;
  method: string;
  result: string;
  message?: string;
}

async function wipe(w: Workflow, lease: NodeLease, node: NodeRow): Promise<Outcome> {
  const settings = await handoverSettingsOf(pool(), node.cluster_id);
  const s = await current(w, lease, "wipe", { command: settings.wipe_command, timeout_s: settings.wipe_timeout_s, devices: node.gpus });
  const report = await runOne(pool(), WIPE_REPORT_OF_WORKFLOW, [w.id]);
  if (!report) {
    if (elapsedS(s.startedAt) < settings.wipe_timeout_s + WIPE_REPORT_GRACE_S) return "waiting";
    const devices = (node.gpus as Array<{ uuid: string; index: number }>).map((g) => `GPU ${g.index} (${g.uuid})`);
    return fail(w, lease, node, {
      step: "wipe",
      stepId: s.id,
      message: `no wipe report within ${settings.wipe_timeout_s} s: not confirmed wiped: ${devices.join(", ") || "every device"}`,
      failures: [],
      devices: devices,
    });
  }
  const devices = report.devices as unknown as Device[];
  const failed = devices.filter((d) => d.result !== "ok");
  if (failed.length) {
    const named = failed.map((d) => `${d.device} (${d.method}${d.message ? `: ${d.message}` : ""})`);
    return fail(w, lease, node, {
      step: "wipe",
      stepId: s.id,
      message: `the wipe failed on ${named.join(", ")}`,
      failures: [],
      devices: failed.map((d) => d.device),
      details: { report_id: report.id, devices },
    });
  }
  await finishWorkflowStep(pool(), lease, s.id, {
    status: "succeeded",
    message: `${devices.length} device(s) wiped`,
    details: { report_id: report.id, devices },
  });
  const t = await db().$transaction((tx) => advanceNodeWithLease(tx, lease, { kind: "workflow", step: "wiped" }, "handover: wiped"));
  if (!t.ok) return "waiting";
  await beginWorkflowStep(pool(), lease, {
    workflowId: w.id,
    name: "attest",
    message: settings.attestation === "off" ? "attestation is off for this cluster" : attestWaitingMessage(),
    details: { attestation: settings.attestation, timeout_s: settings.attestation_timeout_s },
  });
  return "advanced";
}

async function inspect(w: Workflow, lease: NodeLease, node: NodeRow): Promise<Outcome> {
  const settings = await handoverSettingsOf(pool(), node.cluster_id);
  const s = await current(w, lease, "attest", { attestation: settings.attestation, timeout_s: settings.attestation_timeout_s });
  if (settings.attestation === "off") {
    await finishWorkflowStep(pool(), lease, s.id, {
      status: "skipped",
      message: "attestation is off for this cluster: returned without proof",
    });
    return pass(w, lease, node, "returned to service without attestation (off for its cluster)");
  }
  let verdict = await runOne(pool(), LATEST_VERDICT_OF_WORKFLOW, [w.id]);
  if (!verdict) {
    if (elapsedS(s.startedAt) < settings.attestation_timeout_s) return "waiting";
    verdict = (await timeoutVerdict(w, lease, node, settings.attestation_timeout_s)) ?? undefined;
    if (!verdict)
      return fail(w, lease, node, {
        step: "attest",
        stepId: s.id,
        message: `no evidence within ${settings.attestation_timeout_s} s`,
        failures: [],
      });
  }
  const failures = verdict.failures as unknown as Array<{ code: string; message: string }>;
  const details = {
    attestation_id: verdict.id,
    result: verdict.result,
    policy: verdict.policy_name,
    policy_version: verdict.policy_version,
    kid: verdict.kid,
  };
  if (verdict.result === "pass") {
    await finishWorkflowStep(pool(), lease, s.id, {
      status: "succeeded",
      message: `passed policy ${verdict.policy_name} v${verdict.policy_version}`,
      details,
    });
    return pass(w, lease, node, `passed attestation against ${verdict.policy_name} v${verdict.policy_version}`);
  }
  return fail(w, lease, node, {
    step: "attest",
    stepId: s.id,
    message: `the attestation failed: ${failures.map((f) => f.code).join(", ")}`,
    failures,
    details,
  });
}

/** What the attest step waits for; without a usable signing key the evidence is refused (503) until its time runs out. */
function attestWaitingMessage(): string {
  let usable = false;
  try {
    usable = configuredSigningKey() !== null;
  } catch {
    /* configured but unreadable: as good as none */
  }
  return usable
    ? "waiting for the node's TPM evidence"
    : "no usable attestation signing key is configured (ATTESTATION_SIGNING_KEY): the node's evidence is refused, and the handover fails at its attestation time limit";
}

/** The signed verdict a node that sent no evidence gets: it failed, and the record says why. */
async function timeoutVerdict(w: Workflow, lease: NodeLease, node: NodeRow, timeoutS: number) {
  try {
    const key = await signingKeyOrThrow(pool());
    return await db().$transaction(async (tx) => {
      await run(tx, FENCE, [lease.nodeId, lease.token]);
      const identity = await runOne(tx, LIVE_IDENTITY, [node.id]);
      const { policy } = await policyForNode(tx, node.id);
      return recordVerdict(tx, key, {
        nodeId: node.id,
        workflowId: w.id,
        nonce: null,
        failures: [failure("evidence.submission.timeout", `The node sent no evidence within ${timeoutS} s of its inspection`)],
        policy: policy ? { id: policy.id, name: policy.name, version: policy.version } : null,
        pcrDigest: null,
        pcrs: {},
        tpmKind: identity?.tpm_kind ?? null,
        akQualifiedName: identity?.ak_qualified_name ?? null,
        at: new Date(),
      });
    });
  } catch (e) {
    if (isAppError(e)) return null; // no signing key: the handover fails all the same, without a verdict
    throw e;
  }
}

async function pass(w: Workflow, lease: NodeLease, node: NodeRow, outcome: string): Promise<Outcome> {
  const done = await db().$transaction(async (tx) => {
    const t = await advanceNodeWithLease(tx, lease, { kind: "workflow", step: "attested" }, `handover: ${outcome}`);
    if (!t.ok) return false;
    await run(tx, START_HOLDINGS_AFTER_HANDOVER, [node.id, unusableSince(w)]);
    await run(tx, RESOLVE_NODE_ALERT, ["handover_failed", node.id, `. Handed over again: ${outcome}.`]);
    await finishNodeWorkflow(txClient(tx), lease, w.id, { status: "succeeded", outcome });
    await audit(tx, "node.handover_passed", node, { workflow_id: w.id, outcome });
    return true;
  });
  if (!done) return "waiting";
  await emitEvent("scheduler/run.requested", { reason: "a node passed its handover" });
  await emitEvent("endpoints/reconcile.requested", { reason: "a node passed its handover" });
  return "finished";
}

async function fail(
  w: Workflow,
  lease: NodeLease,
  node: NodeRow,
  f: {
    step: string;
    stepId?: string;
    message: string;
    failures: Array<{ code: string; message: string }>;
    devices?: string[];
    details?: Record<string, unknown>;
  },
): Promise<Outcome> {
  if (f.stepId) await finishWorkflowStep(pool(), lease, f.stepId, { status: "failed", message: f.message, details: f.details ?? {} });
  const alert = await db().$transaction(async (tx) => {
    const [n] = await run(tx, NODE_FOR_HANDOVER, [node.id]);
    if (n?.status === "inspecting") {
      const t = await advanceNodeWithLease(tx, lease, { kind: "workflow", step: "attestation_failed" }, `handover: ${f.message}`);
      if (!t.ok) return null;
    }
    const q = await advanceNodeWithLease(tx, lease, { kind: "auto_quarantine" }, `handover failed: ${f.message}`);
    if (!q.ok) return null;
    await run(tx, START_HOLDINGS_AFTER_HANDOVER, [node.id, unusableSince(w)]);
    await finishNodeWorkflow(txClient(tx), lease, w.id, { status: "failed", outcome: f.message });
    const [a] = await run(tx, FIRE_HANDOVER_ALERT, [
      node.id,
      `Node ${node.hostname} was quarantined: its handover failed at the ${f.step} step (${f.message}). No tenant gets it until an operator re-inspects it and it passes`,
      JSON.stringify({ workflow_id: w.id, step: f.step, failures: f.failures, devices: f.devices ?? [] }),
    ]);
    await audit(tx, "node.handover_failed", node, {
      workflow_id: w.id,
      step: f.step,
      message: f.message,
      failures: f.failures.map((x) => x.code),
    });
    return a ?? null;
  });
  if (alert) await enqueueNotifications([alert.id], "firing");
  // a reservation holding the node repairs now (the node left service); replicas move
  await emitEvent("endpoints/reconcile.requested", { reason: "a node failed its handover" });
  return "finished";
}

async function audit(tx: Tx, action: string, node: NodeRow, details: Record<string, unknown>) {
  await recordAudit(tx, systemActorFor("handover"), {
    action,
    targetType: "node",
    targetId: node.id,
    details: JSON.parse(JSON.stringify({ hostname: node.hostname, ...details })),
  });
}
