import "server-only";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import { emitEvent } from "@/lib/background/emit";
import type { DurableStep } from "@/lib/background/types";
import { nodeRedfishClient } from "@/lib/bmc/node-redfish";
import { openBmc, recordBmcContact, recordBmcFailure, type OpenedBmc } from "@/lib/bmc/open-bmc";
import { db, pool } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { isAppError } from "@/lib/errors";
import { acquireNodeLease, isStaleLease, releaseNodeLease, workerId, type NodeLease } from "@/lib/fleet/node-lease";
import {
  advanceNodeWithLease,
  beginWorkflowStep,
  finishNodeWorkflow,
  finishWorkflowStep,
  getNodeWorkflow,
  mergeWorkflowDetails,
  runningWorkflows,
} from "@/lib/fleet/node-workflows";
import { logger } from "@/lib/logger";
import type { Exchange, RedfishClient, RedfishTiming } from "@/lib/redfish/client";
import { FAILURE_HEADLINES, isRedfishError, type RedfishFailure } from "@/lib/redfish/errors";
import { LeaseKeeper, LeaseLost } from "./lease-keeper";
import { appendExchanges, currentStep, dueAt, type ProvisioningWorkflow, type StepState } from "./plan";
import { STEP_LABELS, type ProvisioningFailure, type ProvisioningStep } from "./schemas";
import { AGENT_LAST_SEEN, FIRE_PROVISIONING_ALERT, RESOLVE_PROVISIONING_ALERT, UPDATE_RUNNING_STEP } from "./statements";
import { AgentTimeout, STEP_WORK, type ProvisioningFacts } from "./steps";

// The provisioning runner: every sweep (and every new provisioning) visits the running provisioning
// workflows whose current step is due. A visit takes the node's lease (lib/fleet/node-lease.ts) —
// a workflow another worker holds live is left to it — and works through the steps until one must
// wait or the visit's budget is spent; every write it makes (a step begun, its progress, its end,
// the node's next state) carries the lease's fencing token, and the database refuses it once the
// token is stale. While it works the lease is renewed; a worker that stalls past its lease loses it
// (LeaseKeeper aborts its Redfish client before anything more is sent), and the next sweep, on any
// instance, takes the lease with a new token and continues from the recorded steps.
//
// A step that fails on the BMC's side in a way that may pass (unreachable, a 5xx streak) is tried
// again on later visits with backoff; anything else fails the provisioning: the node is
// quarantined, the workflow ends failed with the step and the kind of failure, and a critical
// alert says what happened. The last step waits for the node's agent; its first heartbeat after
// the power-on moves the node on to inspection (attestation), which the handover runner
// (lib/handover) carries out on the same workflow and ends.

export interface ProvisioningRunOptions {
  step?: DurableStep;
  /** this worker's id (workerId() unless a test runs several) */
  holder?: string;
  leaseTtlMs?: number;
  /** how long one visit works on one workflow before it leaves the rest to the next sweep */
  budgetMs?: number;
  /** how long a step waits inline (a reset settling, a task) before it yields to the next visit */
  inlineWaitMs?: number;
  concurrency?: number;
  timing?: Partial<RedfishTiming>;
  agentTimeoutMs?: number;
  /** how often a visit looks for the agent's return (5 s) */
  agentPollMs?: number;
  /** the first backoff of a step that failed in a way that may pass (doubling per failure) */
  retryBackoffMs?: number;
  /** tests: called before each step's work with the lease held (a stalled worker pauses here) */
  beforeStep?: (name: ProvisioningStep, lease: NodeLease) => Promise<void>;
  /** tests: false stops the renewals (a stalled worker's lease runs out) */
  renew?: boolean;
}

/**
 * What a visit came to. `succeeded`: the agent is back and the node went on to inspection, the
 * workflow running on under the handover runner (lib/handover), which attests the node and ends
 * it; `handed_over`: it had already gone there, nothing left for this runner.
 */
export type VisitOutcome = "busy" | "gone" | "lost" | "waiting" | "succeeded" | "failed" | "handed_over";

const RETRYABLE: ReadonlySet<ProvisioningFailure> = new Set(["unreachable", "server_error"]);
const MAX_FAILURES = 4;

const direct: DurableStep = { run: (_id, fn) => fn() };

/** Sweeps the running provisionings whose step is due; answers what came of each visit. */
export async function advanceProvisionings(opts: ProvisioningRunOptions = {}) {
  const step = opts.step ?? direct;
  const now = Date.now();
  const due = await step.run("due-provisionings", async () =>
    (await runningWorkflows(pool(), "provisioning", 500))
      // a provisioning whose own steps are done is in its inspection: the handover runner's
      .filter((w) => currentStep(w) !== null && dueAt(w, now) <= now)
      .map((w) => w.id),
  );
  const outcomes: VisitOutcome[] = [];
  const queue = [...due];
  await Promise.all(
    Array.from({ length: Math.min(opts.concurrency ?? 16, queue.length) }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        const wid = id;
        outcomes.push(await step.run(`visit-${wid}`, () => visitProvisioning(wid, opts)));
      }
    }),
  );
  const count = (o: VisitOutcome) => outcomes.filter((x) => x === o).length;
  return {
    due: due.length,
    waiting: count("waiting"),
    succeeded: count("succeeded"),
    failed: count("failed"),
    busy: count("busy"),
    lost: count("lost"),
  };
}

function failureOf(e: unknown): { kind: ProvisioningFailure; message: string } | null {
  if (isRedfishError(e)) return { kind: e.kind, message: e.message };
  if (e instanceof AgentTimeout) return { kind: "agent_timeout", message: e.message };
  return null;
}

const headline = (kind: ProvisioningFailure) =>
  kind === "agent_timeout"
    ? "Agent did not register"
    : kind === "bmc_missing"
      ? "No usable BMC"
      : FAILURE_HEADLINES[kind as RedfishFailure];

/** One visit of one provisioning: take the lease, work the due steps, give the lease back. */
export async function visitProvisioning(workflowId: string, opts: ProvisioningRunOptions = {}): Promise<VisitOutcome> {
  const first = (await getNodeWorkflow(pool(), workflowId)) as ProvisioningWorkflow | null;
  if (!first || first.status !== "running") return "gone";
  if (!currentStep(first)) return "handed_over";
  const ttlMs = opts.leaseTtlMs ?? env().PROVISION_LEASE_S * 1000;
  const lease = await acquireNodeLease(pool(), {
    nodeId: first.nodeId,
    purpose: "provisioning",
    workflowId,
    holder: opts.holder ?? workerId("provisioning"),
    ttlMs,
  });
  if (!lease) return "busy";
  const keeper = new LeaseKeeper(lease, ttlMs, opts.renew ?? true);
  try {
    return await work(workflowId, keeper, opts);
  } catch (e) {
    if (keeper.lost || e instanceof LeaseLost || isStaleLease(e)) {
      keeper.loseIt("a write was refused: the lease is no longer this worker's");
      logger.warn("provisioning worker lost its node lease; another continues", {
        workflow: workflowId,
        node: lease.nodeId,
        token: lease.token,
      });
      return "lost";
    }
    throw e;
  } finally {
    keeper.stop();
    if (!keeper.lost) await releaseNodeLease(pool(), keeper.lease).catch(() => false);
  }
}

async function work(workflowId: string, keeper: LeaseKeeper, opts: ProvisioningRunOptions): Promise<VisitOutcome> {
  let wf = (await getNodeWorkflow(pool(), workflowId)) as ProvisioningWorkflow | null;
  if (!wf || wf.status !== "running") return "gone";
  const lease = () => keeper.lease;
  let opened: OpenedBmc;
  try {
    opened = await openBmc(wf.nodeId);
  } catch (e) {
    if (!isAppError(e)) throw e;
    const cur = currentStep(wf)?.name ?? "discover";
    return failWorkflow(lease(), wf, cur, "bmc_missing", e.message);
  }
  const log: Exchange[] = [];
  let client: RedfishClient | undefined;
  const bmc = async () => {
    if (!client) {
      client = nodeRedfishClient(opened, {
        record: (x) => log.push(x),
        ...(opts.timing ? { timing: opts.timing } : {}),
        signal: keeper.signal,
      });
      await client.connect();
    }
    return client;
  };
  const deadline = Date.now() + (opts.budgetMs ?? 30_000);
  try {
    for (;;) {
      const cur = currentStep(wf);
      if (!cur) return "handed_over";
      let record: { id: string; details: StepState } | undefined =
        cur.record?.status === "running" ? { id: cur.record.id, details: cur.record.details as StepState } : undefined;
      if (!record) {
        const begun = await beginWorkflowStep(pool(), lease(), {
          name: cur.name,
          message: STEP_LABELS[cur.name],
          details: { attempts: 0 },
        });
        if (!begun) return "gone";
        record = { id: begun.id, details: {} };
      }
      const state = record.details;
      const { exchanges: _kept, exchanges_omitted: _omitted, ...progress } = state;
      await opts.beforeStep?.(cur.name, lease());
      // a worker that stalled (here, or anywhere since its last renewal) finds out before it says anything to the BMC
      await keeper.renewNow();
      log.length = 0;
      const attempts = (state.attempts ?? 0) + 1;
      let outcome;
      try {
        outcome = await STEP_WORK[cur.name]({
          bmc,
          opened,
          facts: wf.details as unknown as ProvisioningFacts,
          state: progress,
          inlineWaitMs: opts.inlineWaitMs ?? 10_000,
          agentTimeoutMs: opts.agentTimeoutMs ?? env().PROVISION_AGENT_TIMEOUT_S * 1000,
          agentPollMs: opts.agentPollMs ?? 5_000,
          agentSeenAt: async () => (await runOne(pool(), AGENT_LAST_SEEN, [opened.node.id]))?.last_heartbeat_at ?? null,
        });
      } catch (e) {
        if (keeper.signal.aborted) throw keeper.signal.reason;
        const failure = failureOf(e);
        if (!failure) throw e;
        if (isRedfishError(e)) await recordBmcFailure(opened.node.id, e, lease().token);
        const failures = (typeof state.failures === "number" ? state.failures : 0) + 1;
        const kept = appendExchanges(state, log);
        if (RETRYABLE.has(failure.kind) && failures < MAX_FAILURES) {
          const backoff = (opts.retryBackoffMs ?? 15_000) * 2 ** (failures - 1);
          await updateStep(
            lease(),
            record.id,
            { ...progress, attempts, failures, next_at: new Date(Date.now() + backoff).toISOString(), last_error: failure, ...kept },
            `${headline(failure.kind)}: ${failure.message} — trying again in ${Math.round(backoff / 1000)} s (${failures} of ${MAX_FAILURES - 1} retries)`,
          );
          return "waiting";
        }
        await finishWorkflowStep(pool(), lease(), record.id, {
          status: "failed",
          message: `${headline(failure.kind)}: ${failure.message}`,
          details: { attempts, failures, failure, next_at: null, ...kept },
        });
        return failWorkflow(lease(), wf, cur.name, failure.kind, failure.message);
      }
      const kept = appendExchanges(state, log);
      if (outcome.kind === "wait") {
        await updateStep(
          lease(),
          record.id,
          { ...progress, ...outcome.state, attempts, next_at: new Date(Date.now() + outcome.retryInMs).toISOString(), ...kept },
          outcome.message,
        );
        return "waiting";
      }
      await finishWorkflowStep(pool(), lease(), record.id, {
        status: "succeeded",
        message: outcome.message,
        details: { ...outcome.state, attempts, next_at: null, ...kept },
      });
      if (outcome.facts) await mergeWorkflowDetails(pool(), lease(), wf.id, outcome.facts);
      if (cur.name === "discover" && client) {
        const f = outcome.facts ?? {};
        await recordBmcContact(
          opened.node.id,
          {
            system: f.system,
            manager: f.manager,
            virtual_media: f.media,
            virtual_media_on: f.media_on,
            manufacturer: f.manufacturer ?? null,
            model: f.model ?? null,
            auth: client.authMode === "session" ? "session" : "basic",
          },
          lease().token,
        );
      }
      if (cur.name === "wait_for_agent") return succeedWorkflow(lease(), wf);
      wf = (await getNodeWorkflow(pool(), workflowId)) as ProvisioningWorkflow | null;
      if (!wf || wf.status !== "running") return "gone";
      if (Date.now() > deadline) return "waiting";
    }
  } finally {
    if (client && !keeper.signal.aborted) await client.close();
  }
}

async function updateStep(lease: NodeLease, stepId: string, details: Record<string, unknown>, message: string) {
  await run(pool(), UPDATE_RUNNING_STEP, [stepId, lease.nodeId, lease.token, details, message]);
}

/**
 * The agent is back: the node moves on to inspection under the lease and the provisioning's alert
 * resolves. The workflow runs on: its inspection (attestation) is the handover runner's, which ends
 * it (succeeded once the node passes and is available, failed when it does not).
 */
async function succeedWorkflow(lease: NodeLease, wf: ProvisioningWorkflow): Promise<VisitOutcome> {
  const image = typeof wf.details.image_url === "string" ? wf.details.image_url : "";
  const resolved = await db().$transaction(async (tx) => {
    const t = await advanceNodeWithLease(
      tx,
      lease,
      { kind: "workflow", step: "booted" },
      `provisioned from ${image}: the agent registered`,
    );
    if (!t.ok) throw new Error(`the provisioned node could not move on: ${t.reason}`);
    await mergeWorkflowDetails(tx, lease, wf.id, { booted_at: new Date().toISOString() });
    return run(tx, RESOLVE_PROVISIONING_ALERT, [wf.nodeId, `. Provisioned since from ${image}.`]);
  });
  if (resolved.length)
    await enqueueNotifications(
      resolved.map((r) => r.id),
      "resolved",
    );
  await emitEvent("alerts/evaluate.requested", { reason: "node provisioned" });
  return "succeeded";
}

/** The provisioning failed: the node is quarantined under the lease, the workflow ends failed, a critical alert says how. */
async function failWorkflow(
  lease: NodeLease,
  wf: ProvisioningWorkflow,
  step: ProvisioningStep,
  kind: ProvisioningFailure,
  message: string,
): Promise<VisitOutcome> {
  const outcome = `${headline(kind)} at "${STEP_LABELS[step]}": ${message}`;
  const fired = await db().$transaction(async (tx) => {
    await mergeWorkflowDetails(tx, lease, wf.id, { failure: { kind, step, message } });
    const t = await advanceNodeWithLease(tx, lease, { kind: "auto_quarantine" }, `provisioning failed: ${outcome}`.slice(0, 1000));
    await finishNodeWorkflow(tx, lease, wf.id, { status: "failed", outcome });
    return runOne(tx, FIRE_PROVISIONING_ALERT, [
      wf.nodeId,
      `Provisioning failed: ${outcome}.${t.ok && t.changed ? " The node is quarantined." : ""}`.slice(0, 2000),
      { workflow_id: wf.id, step, kind, image_url: wf.details.image_url ?? null },
    ]);
  });
  if (fired?.inserted) await enqueueNotifications([fired.id], "firing");
  await emitEvent("endpoints/reconcile.requested", { reason: "provisioning failed" });
  return "failed";
}
