import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { conflict } from "@/lib/errors";
import { HOLDING_STATUSES, PLACED_STATUSES, type PodStatus } from "./pod-lifecycle";
import { END_POD_PLACEMENTS, FREE_POD_GPUS, MOVE_PODS, RECORD_POD_EVENTS } from "./statements";

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
  const rows = await run(c, MOVE_PODS, [
    ids,
    moves.map((m) => m.from),
    moves.map((m) => m.to),
    moves.map((m) => m.reason),
    PLACED_STATUSES,
  ]);
  if (rows.length !== moves.length) throw conflict("A pod changed meanwhile; try again");
  const released = moves.filter((m) => HOLDING_STATUSES.includes(m.from) && !HOLDING_STATUSES.includes(m.to));
  if (released.length) {
    await run(c, FREE_POD_GPUS, [released.map((m) => m.id)]);
    await run(c, END_POD_PLACEMENTS, [released.map((m) => m.id), released.map((m) => m.to), released.map((m) => m.exitCode ?? null)]);
  }
  await run(c, RECORD_POD_EVENTS, [ids, moves.map((m) => m.from), moves.map((m) => m.to), moves.map((m) => m.reason), actor]);
}
