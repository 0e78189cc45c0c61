import "server-only";
import type { Tx } from "@/lib/db/client";
import { nodeState, transition, type NodeEventKind, type Transition } from "./node-lifecycle";

export interface LockedNode {
  id: string;
  status: string;
  status_before_offline: string | null;
}

/**
 * Applies a lifecycle event to a node locked by the caller and records it in node_events. An
 * offline node asked to become quarantined stays offline but will come back quarantined; that too
 * is recorded. Returns the state machine's answer; a refusal writes nothing.
 */
export async function applyNodeTransition(
  tx: Tx,
  node: LockedNode,
  event: NodeEventKind,
  reason: string,
  actor: string,
): Promise<Transition> {
  const state = nodeState(node);
  const t = transition(state, event);
  if (!t.ok) return t;
  if (t.changed) {
    await tx.node.update({ where: { id: node.id }, data: { status: t.state.status, statusBeforeOffline: t.state.statusBeforeOffline } });
    await tx.nodeEvent.create({ data: { nodeId: node.id, fromStatus: t.from, toStatus: t.to, reason, actor } });
  } else if (t.state.statusBeforeOffline !== state.statusBeforeOffline) {
    await tx.node.update({ where: { id: node.id }, data: { statusBeforeOffline: t.state.statusBeforeOffline } });
    await tx.nodeEvent.create({
      data: {
        nodeId: node.id,
        fromStatus: "offline",
        toStatus: t.state.statusBeforeOffline ?? "offline",
        reason: `${reason} (applies when it returns)`,
        actor,
      },
    });
  }
  return t;
}
