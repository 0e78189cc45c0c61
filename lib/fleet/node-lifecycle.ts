import { oneOf } from "@/lib/vocabulary";

// The node lifecycle as a pure state machine. No I/O: services ask it whether a change is
// allowed and what the new state is, then persist both the state and a node_events row.
//
//   registered ──first heartbeat──▶ available ◀──return──┐
//                                   │   ▲                │
//                               drain   return       maintenance
//                                   ▼   │                │
//                                 draining ──maintenance─┘
//   any ──quarantine──▶ quarantined ──return (operator only)──▶ available
//   any ──heartbeats stop──▶ offline ──next heartbeat──▶ the state it was in before
//   offline ──quarantine / maintenance──▶ offline, returning in that state
//
// A heartbeat can only do two things: make a registered node available, and bring an offline
// node back to where it was. It never takes a node out of maintenance or quarantine.

export const NODE_STATUSES = ["registered", "available", "draining", "maintenance", "quarantined", "offline"] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** What operators may ask for through the UI and PATCH /api/nodes/{id}. */
/** A GPU's own health (the node's status says whether it takes work). */
export const GPU_STATUSES = ["available", "unhealthy", "missing"] as const;
export const OPERATOR_TARGETS = ["available", "draining", "maintenance", "quarantined"] as const;
export type OperatorTarget = (typeof OPERATOR_TARGETS)[number];

export type NodeEventKind =
  { kind: "heartbeat" } | { kind: "heartbeat_missed" } | { kind: "operator"; target: OperatorTarget } | { kind: "auto_quarantine" };

export interface NodeState {
  status: NodeStatus;
  statusBeforeOffline: Exclude<NodeStatus, "offline"> | null;
}

const RETURN_STATUSES = NODE_STATUSES.filter((s): s is Exclude<NodeStatus, "offline"> => s !== "offline");

/** A node's state as its row stores it, narrowed (an unknown status is reported, not passed on). */
export function nodeState(row: { status: string; status_before_offline: string | null }): NodeState {
  return {
    status: oneOf(NODE_STATUSES, row.status, "nodes.status"),
    statusBeforeOffline:
      row.status_before_offline === null ? null : oneOf(RETURN_STATUSES, row.status_before_offline, "nodes.status_before_offline"),
  };
}

export type Transition =
  | { ok: true; changed: false; state: NodeState }
  | { ok: true; changed: true; state: NodeState; from: NodeStatus; to: NodeStatus }
  | { ok: false; reason: string };

const OPERATOR_ALLOWED: Record<OperatorTarget, readonly NodeStatus[]> = {
  draining: ["available"],
  maintenance: ["available", "draining"],
  quarantined: ["registered", "available", "draining", "maintenance"],
  available: ["draining", "maintenance", "quarantined"],
};

const same = (state: NodeState): Transition => ({ ok: true, changed: false, state });
const to = (state: NodeState, next: NodeState): Transition =>
  next.status === state.status ? same(next) : { ok: true, changed: true, state: next, from: state.status, to: next.status };

export function transition(state: NodeState, event: NodeEventKind): Transition {
  switch (event.kind) {
    case "heartbeat": {
      if (state.status === "offline") {
        const back = state.statusBeforeOffline ?? "available";
        // a node that went silent before its first heartbeat finishes registering on return
        return to(state, { status: back === "registered" ? "available" : back, statusBeforeOffline: null });
      }
      if (state.status === "registered") return to(state, { status: "available", statusBeforeOffline: null });
      return same(state);
    }
    case "heartbeat_missed": {
      if (state.status === "offline") return same(state);
      return to(state, { status: "offline", statusBeforeOffline: state.status });
    }
    case "auto_quarantine":
    case "operator": {
      const target: OperatorTarget = event.kind === "auto_quarantine" ? "quarantined" : event.target;
      if (state.status === "offline") {
        // An offline node can be taken out of service (a dead node sent for repair, power work):
        // it stays offline and comes back in that state, by the same rules as if it were there.
        // Putting it back in service or draining waits for the node: there is nothing to drain,
        // and returning it is the operator's word on hardware that cannot be seen while it is off.
        if (target !== "quarantined" && target !== "maintenance") {
          return { ok: false, reason: "The node is offline; it returns to its previous state on its next heartbeat" };
        }
        const before = state.statusBeforeOffline ?? "available";
        if (before === target) return same(state);
        if (!OPERATOR_ALLOWED[target].includes(before)) {
          return { ok: false, reason: `The node is offline and returns ${before}; a ${before} node cannot become ${target}` };
        }
        return same({ status: "offline", statusBeforeOffline: target });
      }
      if (state.status === target) return same(state);
      if (!OPERATOR_ALLOWED[target].includes(state.status)) {
        return { ok: false, reason: `A ${state.status} node cannot become ${target}` };
      }
      return to(state, { status: target, statusBeforeOffline: null });
    }
  }
}
