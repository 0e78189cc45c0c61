import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { conflict } from "@/lib/errors";
import { HOLDING_STATUSES, PLACED_STATUSES, type PodStatus } from "./pod-lifecycle";

export interface PodMove {
  id: string;
  from: PodStatus;
  to: PodStatus;
  /** what the tenant reads on the pod, and the transition's reason in its history */
  reason: string;
  /** a container that ended on its own: its exit code, kept on the placement */
  exitCode?: number | null;
}

/**
 * Applies transitions the state machine allowed (lib/pods/pod-lifecycle.ts) to pods the caller
 * locked, in the caller's transaction, set-based. In the order the allocation checks want: the
 * pods' new status first, then their GPUs. A pod that leaves starting/running releases its GPUs
 * and closes its placement (the placement trigger bills its final segment, once); a pod no longer
 * placed forgets its fence and node. Every move is one row of pod_events.
 */
export async function movePods(c: SqlClient, moves: PodMove[], actor: string): Promise<void> {
  if (moves.length === 0) return;
  const ids = moves.map((m) => m.id);
  const { rows } = await c.query<{ id: string }>(
    `UPDATE pods p SET status = x.to_status, status_reason = x.reason, updated_at = now(),
            fence = CASE WHEN x.to_status = ANY($5::text[]) THEN p.fence END,
            node_id = CASE WHEN x.to_status = ANY($5::text[]) THEN p.node_id END,
            pending_reason = CASE WHEN x.to_status = 'pending' THEN 'Waiting for the next scheduling cycle' END,
            terminated_at = CASE WHEN x.to_status = 'terminated' THEN now() END
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS x(id, from_status, to_status, reason)
      WHERE p.id = x.id AND p.status = x.from_status
      RETURNING p.id::text`,
    [ids, moves.map((m) => m.from), moves.map((m) => m.to), moves.map((m) => m.reason), PLACED_STATUSES],
  );
  if (rows.length !== moves.length) throw conflict("A pod changed meanwhile; try again");
  const released = moves.filter((m) => HOLDING_STATUSES.includes(m.from) && !HOLDING_STATUSES.includes(m.to));
  if (released.length) {
    await c.query(`UPDATE gpus SET allocated_pod_id = NULL, updated_at = now() WHERE allocated_pod_id = ANY($1::uuid[])`, [released.map((m) => m.id)]);
    await c.query(
      `UPDATE pod_placements pl SET ended_at = GREATEST(now(), COALESCE(pl.running_at, pl.started_at)), end_status = x.to_status, exit_code = x.exit_code
         FROM unnest($1::uuid[], $2::text[], $3::int[]) AS x(id, to_status, exit_code)
        WHERE pl.pod_id = x.id AND pl.ended_at IS NULL`,
      [released.map((m) => m.id), released.map((m) => m.to), released.map((m) => m.exitCode ?? null)],
    );
  }
  await c.query(
    `INSERT INTO pod_events (pod_id, from_status, to_status, reason, actor)
     SELECT x.id, x.from_status, x.to_status, x.reason, $5 FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS x(id, from_status, to_status, reason)
      WHERE x.from_status IS DISTINCT FROM x.to_status`,
    [ids, moves.map((m) => m.from), moves.map((m) => m.to), moves.map((m) => m.reason), actor],
  );
}
