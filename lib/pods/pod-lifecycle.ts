import { oneOf } from "@/lib/vocabulary";

// The pod state machine, pure. Services ask it whether an event is allowed and where it leads;
// every transition they apply is written to pod_events with who and why.
//
//   pending ──placed──▶ starting ──container up──▶ running
//   pending ──stop──▶ stopped                       starting | running ──stop──▶ stopping ──node confirms (or times out)──▶ stopped
//   stopped | failed ──start──▶ pending (placed again, possibly on another node)
//   starting | running ──container exited / node lost / start timed out──▶ failed, or pending when restart_on_failure
//   any ──terminate──▶ terminated (final; GPUs released, container removed)
//
// A pod holds GPUs while starting or running (HOLDING_STATUSES); stop releases them at once and
// billing ends with them; `stopping` only waits for the node to say its container is gone.

export const POD_STATUSES = ["pending", "starting", "running", "stopping", "stopped", "failed", "terminated"] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

/** A pod status read back from the database, narrowed (an unknown one is reported, not passed on). */
export const podStatusOf = (raw: string): PodStatus => oneOf(POD_STATUSES, raw, "pods.status");
export const HOLDING_STATUSES: readonly PodStatus[] = ["starting", "running"];
/** A placement of the pod is open (its node runs or is stopping its container). */
export const PLACED_STATUSES: readonly PodStatus[] = ["starting", "running", "stopping"];

export type PodEvent =
  | { kind: "placed" }
  | { kind: "container_running" }
  | { kind: "stop" }
  | { kind: "stop_confirmed" }
  | { kind: "start" }
  | { kind: "terminate" }
  /** the container ended on its own, its node left service, or it never came up in time */
  | { kind: "lost"; restartOnFailure: boolean };

export type PodTransition = { ok: true; to: PodStatus; changed: boolean } | { ok: false; reason: string };

const to = (from: PodStatus, next: PodStatus): PodTransition => ({ ok: true, to: next, changed: from !== next });
const refuse = (from: PodStatus, what: string): PodTransition => ({ ok: false, reason: `A ${from} pod cannot ${what}` });

export function podTransition(from: PodStatus, event: PodEvent): PodTransition {
  switch (event.kind) {
    case "placed":
      return from === "pending" ? to(from, "starting") : refuse(from, "be placed");
    case "container_running":
      // a repeated report of a running container changes nothing
      return from === "starting" || from === "running" ? to(from, "running") : refuse(from, "start its container");
    case "stop":
      if (from === "pending") return to(from, "stopped");
      if (from === "starting" || from === "running") return to(from, "stopping");
      return refuse(from, "be stopped");
    case "stop_confirmed":
      return from === "stopping" ? to(from, "stopped") : refuse(from, "confirm a stop");
    case "start":
      return from === "stopped" || from === "failed" ? to(from, "pending") : refuse(from, "be started");
    case "terminate":
      return from === "terminated" ? refuse(from, "be terminated again") : to(from, "terminated");
    case "lost":
      if (from === "stopping") return to(from, "stopped");
      if (from === "starting" || from === "running") return to(from, event.restartOnFailure ? "pending" : "failed");
      return refuse(from, "lose its container");
  }
}

/** What a tenant may do to a pod now (the console's buttons). */
export function podActions(s: PodStatus): { stop: boolean; start: boolean; terminate: boolean } {
  return {
    stop: podTransition(s, { kind: "stop" }).ok,
    start: podTransition(s, { kind: "start" }).ok,
    terminate: podTransition(s, { kind: "terminate" }).ok,
  };
}
