import { statement } from "@/lib/db/statement";
import { fence } from "./lease-fence";

// The statements of node workflows and their steps (lib/fleet/node-workflows.ts). Those a worker
// runs carry its lease token: the fence is in the statement (node_lease_fence) or in the trigger of
// the table it writes (node_lease_fenced_write), so a stale token fails the statement itself.

const WORKFLOW_COLUMNS = {
  id: "uuid",
  node_id: "uuid",
  kind: "text",
  status: "text",
  trigger: "text",
  reason: "text",
  requested_by: "text",
  details: "jsonb",
  outcome: "text?",
  started_at: "timestamptz",
  finished_at: "timestamptz?",
} as const;
const WORKFLOW_SELECT = `id, node_id, kind, status, trigger, reason, requested_by, details, outcome, started_at, finished_at`;

/** A new running workflow of the node ($1); the unique index refuses a second one while one runs. */
export const INSERT_WORKFLOW = statement("fleet.insert-workflow", {
  params: ["uuid", "text", "text", "text", "text", "jsonb"],
  columns: WORKFLOW_COLUMNS,
  text: `
    INSERT INTO node_workflows (node_id, kind, trigger, reason, requested_by, details)
    VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::text, $6::jsonb)
    RETURNING ${WORKFLOW_SELECT}`,
});

/** The node's ($1) handover is due from now on, until one passes. */
export const MARK_HANDOVER_DUE = statement("fleet.mark-handover-due", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE nodes SET handover_due_since = COALESCE(handover_due_since, now()) WHERE id = $1::uuid`,
});

export const GET_WORKFLOW = statement("fleet.get-workflow", {
  params: ["uuid"],
  columns: WORKFLOW_COLUMNS,
  text: `SELECT ${WORKFLOW_SELECT} FROM node_workflows WHERE id = $1::uuid`,
});

export const RUNNING_WORKFLOW_OF_NODE = statement("fleet.running-workflow-of-node", {
  params: ["uuid"],
  columns: WORKFLOW_COLUMNS,
  text: `SELECT ${WORKFLOW_SELECT} FROM node_workflows WHERE node_id = $1::uuid AND status = 'running'`,
});

/** The node's ($1) latest workflows, newest first, at most $2. */
export const RECENT_WORKFLOWS_OF_NODE = statement("fleet.recent-workflows-of-node", {
  params: ["uuid", "int4"],
  columns: WORKFLOW_COLUMNS,
  text: `SELECT ${WORKFLOW_SELECT} FROM node_workflows WHERE node_id = $1::uuid ORDER BY started_at DESC, id LIMIT $2::int4`,
});

/** Running workflows of a kind ($1), oldest first, at most $2: what a sweep of that kind's runner looks at. */
export const RUNNING_WORKFLOWS = statement("fleet.running-workflows", {
  params: ["text", "int4"],
  columns: WORKFLOW_COLUMNS,
  text: `SELECT ${WORKFLOW_SELECT} FROM node_workflows WHERE kind = $1::text AND status = 'running' ORDER BY started_at LIMIT $2::int4`,
});

/** A worker ends its workflow ($1) under its token ($3 on node $2): $4 status, $5 outcome. */
export const FINISH_WORKFLOW = statement("fleet.finish-workflow", {
  params: ["uuid", "uuid", "int8", "text", "text"],
  columns: { id: "uuid" },
  text: `
    UPDATE node_workflows SET status = $4::text, outcome = $5::text, finished_at = now(), updated_at = now(), lease_token = $3::int8
     WHERE id = $1::uuid AND node_id = $2::uuid AND status = 'running'
    RETURNING id`,
});

/** A worker records facts about its workflow ($1, node $2, token $3): $4 merged into its details. */
export const MERGE_WORKFLOW_DETAILS = statement("fleet.merge-workflow-details", {
  params: ["uuid", "uuid", "int8", "jsonb"],
  columns: { id: "uuid" },
  text: `
    UPDATE node_workflows SET details = details || $4::jsonb, updated_at = now(), lease_token = $3::int8
     WHERE id = $1::uuid AND node_id = $2::uuid AND status = 'running'
    RETURNING id`,
});

/** An operator (not a worker: no token) stops the node's ($1) running workflow ($2: why). */
export const CANCEL_RUNNING_WORKFLOW = statement("fleet.cancel-running-workflow", {
  params: ["uuid", "text"],
  columns: { id: "uuid" },
  text: `
    UPDATE node_workflows SET status = 'cancelled', outcome = $2::text, finished_at = now(), updated_at = now(), lease_token = NULL
     WHERE node_id = $1::uuid AND status = 'running'
    RETURNING id`,
});

/** The steps still running in a cancelled workflow ($1) end as failed, saying why ($2). */
export const FAIL_RUNNING_STEPS = statement("fleet.fail-running-steps", {
  params: ["uuid", "text"],
  columns: {},
  text: `
    UPDATE node_workflow_steps SET status = 'failed', message = left($2::text, 4000), finished_at = now(), lease_token = NULL
     WHERE workflow_id = $1::uuid AND status = 'running'`,
});

const STEP_COLUMNS = {
  id: "int8",
  workflow_id: "uuid",
  name: "text",
  status: "text",
  lease_token: "int8?",
  message: "text?",
  details: "jsonb",
  started_at: "timestamptz",
  finished_at: "timestamptz?",
} as const;
const STEP_SELECT = `id, workflow_id, name, status, lease_token, message, details, started_at, finished_at`;

/** A worker begins a step ($3) of its running workflow ($1, node $2) under its token ($4). */
export const BEGIN_STEP = statement("fleet.begin-workflow-step", {
  params: ["uuid", "uuid", "text", "int8", "text?", "jsonb"],
  columns: STEP_COLUMNS,
  text: `
    INSERT INTO node_workflow_steps (workflow_id, node_id, name, lease_token, message, details)
    SELECT w.id, w.node_id, $3::text, $4::int8, left($5::text, 4000), $6::jsonb FROM node_workflows w
     WHERE w.id = $1::uuid AND w.node_id = $2::uuid AND w.status = 'running'
    RETURNING ${STEP_SELECT}`,
});

/** A worker ends a running step ($1, node $2) under its token ($3): $4 status, $5 message, $6 merged into its details. */
export const FINISH_STEP = statement("fleet.finish-workflow-step", {
  params: ["int8", "uuid", "int8", "text", "text?", "jsonb"],
  columns: STEP_COLUMNS,
  text: `
    UPDATE node_workflow_steps SET status = $4::text, message = COALESCE(left($5::text, 4000), message), details = details || $6::jsonb,
           finished_at = now(), lease_token = $3::int8
     WHERE id = $1::int8 AND node_id = $2::uuid AND status = 'running'
    RETURNING ${STEP_SELECT}`,
});

/** The steps of workflows ($1), in the order they were taken. */
export const STEPS_OF_WORKFLOWS = statement("fleet.steps-of-workflows", {
  params: ["uuid[]"],
  columns: STEP_COLUMNS,
  text: `SELECT ${STEP_SELECT} FROM node_workflow_steps WHERE workflow_id = ANY($1::uuid[]) ORDER BY workflow_id, id`,
});

/**
 * A worker moves the node ($1) under its token ($2) from $3 to $4 (returning in $5 when offline),
 * clearing its due handover when $6, and records the change with the token ($7 why, $8 who): the
 * fence is in the UPDATE, and the event row's trigger checks the same token again.
 */
export const LEASED_NODE_TRANSITION = statement("fleet.leased-node-transition", {
  params: ["uuid", "int8", "text", "text", "text?", "bool", "text", "text"],
  columns: { id: "int8" },
  text: `
    WITH moved AS (
      UPDATE nodes SET status = $4::text, status_before_offline = $5::text,
             handover_due_since = CASE WHEN $6::bool THEN NULL ELSE handover_due_since END, updated_at = now()
       WHERE id = $1::uuid AND status = $3::text AND ${fence(1, 2)}
      RETURNING id
    )
    INSERT INTO node_events (node_id, from_status, to_status, reason, actor, lease_token)
    SELECT id, $3::text, CASE WHEN $4::text = 'offline' THEN COALESCE($5::text, 'offline') ELSE $4::text END, $7::text, $8::text, $2::int8 FROM moved
    RETURNING id`,
});
