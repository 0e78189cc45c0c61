import "server-only";
import type { Tx } from "@/lib/db/client";
import { run, runOne, type RowOf, type Runner } from "@/lib/db/statement";
import { conflict, isUniqueViolation } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import { applyNodeTransition, type LockedNode } from "./apply-node-transition";
import { isHandoverStatus, nodeState, transition, type NodeEventKind, type Transition, type WorkflowStep } from "./node-lifecycle";
import { assertNodeLease, revokeNodeLease, type NodeLease } from "./node-lease";
import { LOCK_NODE } from "./statements";
import {
  WORKFLOW_KINDS,
  WORKFLOW_STATUSES,
  WORKFLOW_TRIGGERS,
  STEP_STATUSES,
  type StepStatus,
  type WorkflowKind,
  type WorkflowStatus,
  type WorkflowTrigger,
} from "./workflow-vocabulary";
import {
  BEGIN_STEP,
  CANCEL_RUNNING_WORKFLOW,
  FAIL_RUNNING_STEPS,
  FINISH_STEP,
  FINISH_WORKFLOW,
  GET_WORKFLOW,
  INSERT_WORKFLOW,
  LEASED_NODE_TRANSITION,
  MARK_HANDOVER_DUE,
  MERGE_WORKFLOW_DETAILS,
  RECENT_WORKFLOWS_OF_NODE,
  RUNNING_WORKFLOW_OF_NODE,
  RUNNING_WORKFLOWS,
  STEPS_OF_WORKFLOWS,
} from "./workflow-statements";

// Node workflows (a handover between tenants, a provisioning from bare metal) and the steps they
// take. A workflow is started by whoever asks for it (the tenancy's end, an operator) in the same
// transaction that moves the node into its first state; from then on only lease holders
// (lib/fleet/node-lease.ts) write it: every step they record and every state they move the node to
// carries their token and is refused by the database once that token is stale. An operator stops
// a workflow by taking the node out of service, which revokes the lease in the same transaction.

export type WorkflowRow = RowOf<typeof INSERT_WORKFLOW>;
export type StepRow = RowOf<typeof BEGIN_STEP>;

export interface StartWorkflow {
  kind: WorkflowKind;
  trigger: WorkflowTrigger;
  /** the lifecycle event that moves the node into the workflow's first state */
  event: Extract<NodeEventKind, { kind: "handover" } | { kind: "provision" }>;
  reason: string;
  actor: string;
  details?: Record<string, unknown>;
}

/**
 * Starts a workflow on a node the caller has locked (LOCK_NODE): moves the node into its first
 * state (recorded in node_events), marks its handover due until one passes, and records the running
 * workflow. A refusal of the state machine writes nothing; a workflow already running on the node
 * is a conflict.
 */
export async function startNodeWorkflow(
  tx: Tx,
  node: LockedNode,
  req: StartWorkflow,
): Promise<{ ok: true; workflow: WorkflowRow; transition: Transition } | { ok: false; reason: string }> {
  const t = await applyNodeTransition(tx, node, req.event, req.reason, req.actor);
  if (!t.ok) return t;
  await run(tx, MARK_HANDOVER_DUE, [node.id]);
  try {
    const workflow = (await runOne(tx, INSERT_WORKFLOW, [
      node.id,
      req.kind,
      req.trigger,
      req.reason,
      req.actor,
      JSON.stringify(req.details ?? {}),
    ]))!;
    return { ok: true, workflow, transition: t };
  } catch (e) {
    if (isUniqueViolation(e))
      throw conflict("Another workflow is running on this node", [{ path: "node_id", message: "a workflow is running" }]);
    throw e;
  }
}

/** Begins a step of the lease holder's running workflow; null when the workflow is no longer running. */
export async function beginWorkflowStep(
  client: Runner,
  lease: NodeLease,
  step: { workflowId?: string; name: string; message?: string; details?: Record<string, unknown> },
): Promise<StepRow | null> {
  const workflowId = step.workflowId ?? lease.workflowId;
  if (!workflowId) throw new Error("beginWorkflowStep: the lease serves no workflow and none was named");
  return (
    (await runOne(client, BEGIN_STEP, [
      workflowId,
      lease.nodeId,
      step.name,
      lease.token,
      step.message ?? null,
      JSON.stringify(step.details ?? {}),
    ])) ?? null
  );
}

/** Ends a running step under the holder's token; null when it had already ended. */
export async function finishWorkflowStep(
  client: Runner,
  lease: NodeLease,
  stepId: string,
  end: { status: Exclude<StepStatus, "running">; message?: string; details?: Record<string, unknown> },
): Promise<StepRow | null> {
  return (
    (await runOne(client, FINISH_STEP, [
      stepId,
      lease.nodeId,
      lease.token,
      end.status,
      end.message ?? null,
      JSON.stringify(end.details ?? {}),
    ])) ?? null
  );
}

/** Adds facts to the running workflow's details under the holder's token; false when it is no longer running. */
export async function mergeWorkflowDetails(client: Runner, lease: NodeLease, workflowId: string, details: Record<string, unknown>) {
  return (await run(client, MERGE_WORKFLOW_DETAILS, [workflowId, lease.nodeId, lease.token, JSON.stringify(details)])).length === 1;
}

/** Ends the running workflow under the holder's token; false when it had already ended. */
export async function finishNodeWorkflow(
  client: Runner,
  lease: NodeLease,
  workflowId: string,
  end: { status: "succeeded" | "failed"; outcome: string },
): Promise<boolean> {
  return (await run(client, FINISH_WORKFLOW, [workflowId, lease.nodeId, lease.token, end.status, end.outcome])).length === 1;
}

/**
 * Moves the node under the holder's lease: a workflow step finished, or the workflow quarantines
 * the node it failed on. Locks the node row (before the lease row, the order every path takes),
 * asks the state machine, and writes the change with the token, fenced in the statement. Answers
 * the state machine's refusal (the node is no longer where the step expects: an operator stepped
 * in, say) without writing; a stale token raises (isStaleLease).
 */
export async function advanceNodeWithLease(
  tx: Tx,
  lease: NodeLease,
  event: { kind: "workflow"; step: WorkflowStep } | { kind: "auto_quarantine" },
  reason: string,
): Promise<Transition> {
  const [node] = await run(tx, LOCK_NODE, [lease.nodeId]);
  if (!node) return { ok: false, reason: "The node no longer exists" };
  // a worker that lost its lease hears so here, even when the step would change nothing
  await assertNodeLease(tx, lease);
  const state = nodeState(node);
  const t = transition(state, event);
  if (!t.ok) return t;
  if (!t.changed && t.state.statusBeforeOffline === state.statusBeforeOffline) return t;
  const attested = event.kind === "workflow" && event.step === "attested";
  const written = await run(tx, LEASED_NODE_TRANSITION, [
    lease.nodeId,
    lease.token,
    state.status,
    t.state.status,
    t.state.statusBeforeOffline,
    attested,
    reason,
    lease.holder,
  ]);
  if (written.length !== 1) return { ok: false, reason: "The node changed meanwhile" };
  return t;
}

/**
 * An operator stops the node's running workflow (it took the node out of service, or starts
 * another): the lease is revoked first, so the worker's next write is refused, then the workflow
 * and its running steps end as cancelled. Runs inside the caller's transaction, after it locked the
 * node. Answers the cancelled workflow's id, or null when none was running.
 */
async function cancelNodeWorkflow(tx: Tx, nodeId: string, why: string): Promise<string | null> {
  await revokeNodeLease(tx, nodeId);
  const [w] = await run(tx, CANCEL_RUNNING_WORKFLOW, [nodeId, why]);
  if (!w) return null;
  await run(tx, FAIL_RUNNING_STEPS, [w.id, `cancelled: ${why}`]);
  return w.id;
}

/**
 * After a lifecycle change by anyone but the workflow (an operator, an automatic quarantine): when
 * it took the node out of a handover or provisioning state (or changed the state an offline node
 * returns in away from one), the workflow is stopped (cancelNodeWorkflow). Answers its id, if any.
 */
export async function stopWorkflowIfLeft(tx: Tx, before: LockedNode, t: Transition, why: string): Promise<string | null> {
  if (!t.ok) return null;
  const was = before.status === "offline" ? before.status_before_offline : before.status;
  const now = t.state.status === "offline" ? t.state.statusBeforeOffline : t.state.status;
  if (!was || !isHandoverStatus(was) || now === was) return null;
  return cancelNodeWorkflow(tx, before.id, why);
}

/** A workflow as readers see it: its closed columns narrowed, its steps in the order they were taken. */
interface NodeWorkflow {
  id: string;
  nodeId: string;
  kind: WorkflowKind;
  status: WorkflowStatus;
  trigger: WorkflowTrigger;
  reason: string;
  requestedBy: string;
  details: Record<string, unknown>;
  outcome: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  steps: Array<{
    id: string;
    name: string;
    status: StepStatus;
    leaseToken: string | null;
    message: string | null;
    details: Record<string, unknown>;
    startedAt: Date;
    finishedAt: Date | null;
  }>;
}

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

async function withSteps(client: Runner, rows: WorkflowRow[]): Promise<NodeWorkflow[]> {
  const steps = rows.length ? await run(client, STEPS_OF_WORKFLOWS, [rows.map((r) => r.id)]) : [];
  return rows.map((r) => ({
    id: r.id,
    nodeId: r.node_id,
    kind: oneOf(WORKFLOW_KINDS, r.kind, "node_workflows.kind"),
    status: oneOf(WORKFLOW_STATUSES, r.status, "node_workflows.status"),
    trigger: oneOf(WORKFLOW_TRIGGERS, r.trigger, "node_workflows.trigger"),
    reason: r.reason,
    requestedBy: r.requested_by,
    details: asObject(r.details),
    outcome: r.outcome,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    steps: steps
      .filter((s) => s.workflow_id === r.id)
      .map((s) => ({
        id: s.id,
        name: s.name,
        status: oneOf(STEP_STATUSES, s.status, "node_workflow_steps.status"),
        leaseToken: s.lease_token,
        message: s.message,
        details: asObject(s.details),
        startedAt: s.started_at,
        finishedAt: s.finished_at,
      })),
  }));
}

/** The node's latest workflows with their steps, newest first (the node page's timeline). */
export async function listNodeWorkflows(client: Runner, nodeId: string, limit = 10): Promise<NodeWorkflow[]> {
  return withSteps(client, await run(client, RECENT_WORKFLOWS_OF_NODE, [nodeId, limit]));
}

/** The workflow running on the node, if any. */
export async function runningWorkflowOf(client: Runner, nodeId: string): Promise<NodeWorkflow | null> {
  return (await withSteps(client, await run(client, RUNNING_WORKFLOW_OF_NODE, [nodeId])))[0] ?? null;
}

/** Running workflows of a kind, oldest first: what that kind's runner sweeps. */
export async function runningWorkflows(client: Runner, kind: WorkflowKind, limit = 200): Promise<NodeWorkflow[]> {
  return withSteps(client, await run(client, RUNNING_WORKFLOWS, [kind, limit]));
}

/** One workflow with its steps, or null. */
export async function getNodeWorkflow(client: Runner, id: string): Promise<NodeWorkflow | null> {
  return (await withSteps(client, await run(client, GET_WORKFLOW, [id])))[0] ?? null;
}
