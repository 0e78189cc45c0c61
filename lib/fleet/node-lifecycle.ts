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
// Handover between tenants, and provisioning from bare metal, are workflows of leased steps
// (lib/fleet/node-lease.ts) that move the node through states of their own. Nothing is placed,
// started or reserved into a node in any of them (the database refuses it, not only this code):
//
//   available, draining, maintenance, quarantined ──handover──▶ releasing ──released──▶ wiping
//   wiping ──wiped──▶ inspecting ──attested──▶ available
//   wiping ──wipe failed (auto quarantine)──▶ quarantined
//   inspecting ──attestation failed──▶ attestation_failed ──auto quarantine──▶ quarantined
//   maintenance, quarantined, attestation_failed ──re-inspect──▶ inspecting
//   registered, maintenance, quarantined ──provision──▶ provisioning ──booted──▶ inspecting
//   provisioning ──provisioning failed (auto quarantine)──▶ quarantined
//
// Only the workflow's own steps advance a handover or a provisioning (an operator cannot declare a
// node wiped or attested); an operator can always abort one by quarantine or maintenance. A node
// being provisioned is expected to be silent (powered off, rebooting) and does not go offline; a
// node in the other handover states that goes silent goes offline remembering where it was, and a
// node whose tenancy ends while it is offline comes back releasing, never available unwiped.
//
// A heartbeat can only do two things: make a registered node available, and bring an offline
// node back to where it was. It never takes a node out of maintenance, quarantine or a handover.

export const NODE_STATUSES = [
  "registered",
  "available",
  "draining",
  "maintenance",
  "quarantined",
  "offline",
  "provisioning",
  "releasing",
  "wiping",
  "inspecting",
  "attestation_failed",
] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** The states of a handover or a provisioning: the node belongs to the workflow, and takes no work or booking. */
export const HANDOVER_STATUSES = ["provisioning", "releasing", "wiping", "inspecting", "attestation_failed"] as const;
export type HandoverStatus = (typeof HANDOVER_STATUSES)[number];
export const isHandoverStatus = (s: string): s is HandoverStatus => (HANDOVER_STATUSES as readonly string[]).includes(s);

/** A GPU's own health (the node's status says whether it takes work). */
export const GPU_STATUSES = ["available", "unhealthy", "missing"] as const;
/** What operators may ask for through the UI and PATCH /api/nodes/{id}. */
export const OPERATOR_TARGETS = ["available", "draining", "maintenance", "quarantined"] as const;
export type OperatorTarget = (typeof OPERATOR_TARGETS)[number];

/** The steps a handover or provisioning workflow reports, each moving the node one state on. */
export const WORKFLOW_STEPS = ["released", "wiped", "booted", "attested", "attestation_failed"] as const;
export type WorkflowStep = (typeof WORKFLOW_STEPS)[number];

export type NodeEventKind =
  | { kind: "heartbeat" }
  | { kind: "heartbeat_missed" }
  | { kind: "operator"; target: OperatorTarget }
  | { kind: "auto_quarantine" }
  /** a tenancy of the whole node ended, or an operator asked: `full` wipes and inspects, `inspect` only inspects again */
  | { kind: "handover"; mode: "full" | "inspect" }
  /** an operator provisions the node from bare metal through its BMC */
  | { kind: "provision" }
  /** a step of the node's running workflow finished (the service checks the step holds the node's lease) */
  | { kind: "workflow"; step: WorkflowStep };

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
  // an operator may stop a handover or a provisioning by taking the node out of service
  maintenance: ["available", "draining", ...HANDOVER_STATUSES],
  quarantined: ["registered", "available", "draining", "maintenance", ...HANDOVER_STATUSES],
  // never from a handover state: only the workflow's own steps declare a node wiped and attested
  available: ["draining", "maintenance", "quarantined"],
};

/** Where a handover starts from: a node in service, or one out of service an operator sends through it. */
const HANDOVER_FROM: Record<"full" | "inspect", readonly NodeStatus[]> = {
  full: ["available", "draining", "maintenance", "quarantined", "attestation_failed"],
  inspect: ["maintenance", "quarantined", "attestation_failed"],
};
/** A node is provisioned from out of service, or before it ever took work. */
const PROVISION_FROM: readonly NodeStatus[] = ["registered", "maintenance", "quarantined"];

/** Each workflow step: the state it finishes and the state it leads to. */
const STEP_MOVES: Record<WorkflowStep, { from: readonly NodeStatus[]; to: NodeStatus }> = {
  released: { from: ["releasing"], to: "wiping" },
  wiped: { from: ["wiping"], to: "inspecting" },
  booted: { from: ["provisioning"], to: "inspecting" },
  attested: { from: ["inspecting"], to: "available" },
  attestation_failed: { from: ["inspecting"], to: "attestation_failed" },
};

const same = (state: NodeState): Transition => ({ ok: true, changed: false, state });
const to = (state: NodeState, next: NodeState): Transition =>
  next.status === state.status ? same(next) : { ok: true, changed: true, state: next, from: state.status, to: next.status };
const moved = (state: NodeState, status: NodeStatus): Transition => to(state, { status, statusBeforeOffline: null });

export function transition(state: NodeState, event: NodeEventKind): Transition {
  switch (event.kind) {
    case "heartbeat": {
      if (state.status === "offline") {
        const back = state.statusBeforeOffline ?? "available";
        // a node that went silent before its first heartbeat finishes registering on return
        return to(state, { status: back === "registered" ? "available" : back, statusBeforeOffline: null });
      }
      if (state.status === "registered") return moved(state, "available");
      return same(state);
    }
    case "heartbeat_missed": {
      // powered off, booting an installer: silence is what provisioning looks like
      if (state.status === "offline" || state.status === "provisioning") return same(state);
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
        const why =
          target === "available" && isHandoverStatus(state.status) ? " (its workflow returns it once it passes; or quarantine it)" : "";
        return { ok: false, reason: `A ${state.status} node cannot become ${target}${why}` };
      }
      return moved(state, target);
    }
    case "handover": {
      const first: NodeStatus = event.mode === "full" ? "releasing" : "inspecting";
      const allowed = HANDOVER_FROM[event.mode];
      if (state.status === "offline") {
        // the tenancy ended while the node was silent: it returns into the handover, never straight into service
        const before = state.statusBeforeOffline ?? "available";
        if (!allowed.includes(before))
          return { ok: false, reason: `The node is offline and returns ${before}; it cannot be handed over from there` };
        return same({ status: "offline", statusBeforeOffline: first });
      }
      if (!allowed.includes(state.status)) {
        return { ok: false, reason: `A ${state.status} node cannot start a${event.mode === "inspect" ? " re-inspection" : " handover"}` };
      }
      return moved(state, first);
    }
    case "provision": {
      // a node that is off is what provisioning is for: the BMC powers it and boots the image
      const from = state.status === "offline" ? (state.statusBeforeOffline ?? "available") : state.status;
      if (!PROVISION_FROM.includes(from)) {
        return {
          ok: false,
          reason: `A ${from} node cannot be provisioned; take it out of service (maintenance or quarantine) first`,
        };
      }
      return to(state, { status: "provisioning", statusBeforeOffline: null });
    }
    case "workflow": {
      const move = STEP_MOVES[event.step];
      if (state.status === "offline") return { ok: false, reason: "The node is offline; its workflow continues when it returns" };
      if (!move.from.includes(state.status)) {
        return { ok: false, reason: `A ${state.status} node is not at the step that "${event.step}" finishes` };
      }
      return moved(state, move.to);
    }
  }
}
