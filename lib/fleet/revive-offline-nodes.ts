import "server-only";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { nodeState, transition } from "./node-lifecycle";
import { LOCK_NODE } from "./statements";

/** Nodes that report again after going offline return to the state they were in (metrics count as a heartbeat). */
export async function reviveOfflineNodes(nodeIds: string[], actorLabel: string): Promise<number> {
  let revived = 0;
  for (const id of nodeIds) {
    await db().$transaction(async (tx) => {
      const rows = await run(tx, LOCK_NODE, [id]);
      const row = rows[0];
      if (!row || row.status !== "offline") return;
      const t = transition(nodeState(row), { kind: "heartbeat" });
      if (!t.ok || !t.changed) return;
      await tx.node.update({ where: { id }, data: { status: t.state.status, statusBeforeOffline: null, lastHeartbeatAt: new Date() } });
      await tx.nodeEvent.create({ data: { nodeId: id, fromStatus: t.from, toStatus: t.to, reason: "metrics resumed", actor: actorLabel } });
      revived++;
    });
  }
  return revived;
}
