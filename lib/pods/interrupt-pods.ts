import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { movePods } from "./move-pods";
import { podStatusOf, podTransition } from "./pod-lifecycle";
import { FIRE_PODS_INTERRUPTED, LOCK_PODS_ON_NODES } from "./statements";

/**
 * Pods on nodes that left service (quarantined, in maintenance, offline), in the caller's
 * transaction. A pod is stateful: it is not silently run again elsewhere. It is marked failed
 * (interrupted) and its tenant alerted, unless the tenant asked for restart_on_failure, in which
 * case it is placed again (its container's state does not survive, and the alert says so). Its
 * GPUs are released and its billing ends either way. A pod that was stopping is simply stopped.
 */
export async function interruptPodsOnNodes(c: SqlClient, nodeIds: string[], why: string, actor: string): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const rows = (await run(c, LOCK_PODS_ON_NODES, [nodeIds])).map((r) => ({ ...r, status: podStatusOf(r.status) }));
  const moves = rows.map((r) => {
    const t = podTransition(r.status, { kind: "lost", restartOnFailure: r.restart_on_failure });
    const to = t.ok ? t.to : r.status;
    const reason =
      r.status === "stopping"
        ? `stopped: ${why}`
        : to === "pending"
          ? `interrupted: ${why}; placed again (restart on failure), its container starts fresh`
          : `interrupted: ${why}; start it again when you are ready`;
    return { id: r.id, from: r.status, to, reason };
  });
  await movePods(c, moves, actor);
  const interrupted = moves.filter((m) => m.from !== "stopping");
  if (interrupted.length) {
    // each tenant hears that its pod stopped, and why; it resolves once the pod runs again or the tenant acts
    await run(c, FIRE_PODS_INTERRUPTED, [interrupted.map((m) => m.id), why]);
  }
  return interrupted.map((m) => m.id);
}
