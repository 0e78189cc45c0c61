import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { interruptPodsOnNodes } from "./interrupt-pods";
import { movePods } from "./move-pods";
import type { PodStatus } from "./pod-lifecycle";

/**
 * The pods' sweep (every few seconds, and at once when asked): pods whose node left service are
 * interrupted (the node transitions do it in their own transaction; this catches the rest), a
 * container not up POD_START_TIMEOUT_S after placement fails the pod, and a stop the node never
 * confirmed within POD_STOP_CONFIRM_S counts as done (its GPUs were released when it was asked).
 */
export async function reconcilePods(now = new Date()) {
  const { interrupted, late } = await inTransaction(async (c) => {
    const { rows: lost } = await c.query<{ node_id: string; status: string }>(
      `SELECT DISTINCT n.id::text AS node_id, n.status FROM pods p JOIN nodes n ON n.id = p.node_id
        WHERE p.status IN ('starting', 'running', 'stopping') AND n.status NOT IN ('available', 'draining')`,
    );
    const interrupted: string[] = [];
    for (const status of [...new Set(lost.map((l) => l.status))]) {
      const nodes = lost.filter((l) => l.status === status).map((l) => l.node_id);
      interrupted.push(...(await interruptPodsOnNodes(c, nodes, `its node is ${status}`, "system")));
    }
    const { rows: late } = await c.query<{ id: string; status: PodStatus }>(
      `SELECT p.id::text, p.status FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts
        WHERE (p.status = 'starting' AND pl.started_at < $1::timestamptz - make_interval(secs => $2::int))
           OR (p.status = 'stopping' AND p.updated_at < $1::timestamptz - make_interval(secs => $3::int))
        ORDER BY p.id FOR UPDATE OF p SKIP LOCKED`,
      [now, env().POD_START_TIMEOUT_S, env().POD_STOP_CONFIRM_S],
    );
    await movePods(
      c,
      late.map((p) =>
        p.status === "starting"
          ? { id: p.id, from: p.status, to: "failed" as const, reason: `its container did not come up within ${env().POD_START_TIMEOUT_S} s of placement` }
          : { id: p.id, from: p.status, to: "stopped" as const, reason: `its node did not confirm the stop within ${env().POD_STOP_CONFIRM_S} s; counted as stopped` },
      ),
      "system",
    );
    return { interrupted, late };
  });
  if (interrupted.length || late.some((p) => p.status === "starting")) await emitEvent("scheduler/run.requested", { reason: "pods interrupted or failed" });
  return { pods_interrupted: interrupted.length, pods_timed_out: late.length };
}
