import "server-only";
import { db } from "@/lib/db/client";
import { transition, type NodeState } from "./node-lifecycle";

/** Nodes that report again after going offline return to the state they were in (metrics count as a heartbeat). */
export async function reviveOfflineNodes(nodeIds: string[], actorLabel: string): Promise<number> {
  let revived = 0;
  for (const id of nodeIds) {
    await db().$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ status: string; status_before_offline: string | null }>>`
        SELECT status, status_before_offline FROM nodes WHERE id = ${id}::uuid FOR UPDATE`;
      const row = rows[0];
      if (!row || row.status !== "offline") return;
      const t = transition({ status: row.status, statusBeforeOffline: row.status_before_offline } as NodeState, { kind: "heartbeat" });
      if (!t.ok || !t.changed) return;
      await tx.node.update({ where: { id }, data: { status: t.state.status, statusBeforeOffline: null, lastHeartbeatAt: new Date() } });
      await tx.nodeEvent.create({ data: { nodeId: id, fromStatus: t.from, toStatus: t.to, reason: "metrics resumed", actor: actorLabel } });
      revived++;
    });
  }
  return revived;
}
