import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { run } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { interruptPodsOnNodes } from "./interrupt-pods";
import { movePods } from "./move-pods";
import { podStatusOf } from "./pod-lifecycle";
import { LATE_PODS, NODES_LOSING_PODS } from "./statements";

/**
 * The pods' sweep (every few seconds, and at once when asked): pods whose node left service are
 * interrupted (the node transitions do it in their own transaction; this catches the rest), a
 * container not up POD_START_TIMEOUT_S after placement fails the pod, and a stop the node never
 * confirmed within POD_STOP_CONFIRM_S counts as done (its GPUs were released when it was asked).
 */
export async function reconcilePods(now = new Date()) {
  const { interrupted, late } = await inTransaction(async (c) => {
    const lost = await run(c, NODES_LOSING_PODS);
    const interrupted: string[] = [];
    for (const status of [...new Set(lost.map((l) => l.status))]) {
      const nodes = lost.filter((l) => l.status === status).map((l) => l.node_id);
      interrupted.push(...(await interruptPodsOnNodes(c, nodes, `its node is ${status}`, "system")));
    }
    const late = (await run(c, LATE_PODS, [now, env().POD_START_TIMEOUT_S, env().POD_STOP_CONFIRM_S])).map((p) => ({
      ...p,
      status: podStatusOf(p.status),
    }));
    await movePods(
      c,
      late.map((p) =>
        p.status === "starting"
          ? {
              id: p.id,
              from: p.status,
              to: "failed" as const,
              reason: `its container did not come up within ${env().POD_START_TIMEOUT_S} s of placement`,
            }
          : {
              id: p.id,
              from: p.status,
              to: "stopped" as const,
              reason: `its node did not confirm the stop within ${env().POD_STOP_CONFIRM_S} s; counted as stopped`,
            },
      ),
      "system",
    );
    return { interrupted, late };
  });
  if (interrupted.length || late.some((p) => p.status === "starting"))
    await emitEvent("scheduler/run.requested", { reason: "pods interrupted or failed" });
  return { pods_interrupted: interrupted.length, pods_timed_out: late.length };
}
