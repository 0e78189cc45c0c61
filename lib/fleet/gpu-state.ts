// A GPU's effective state, as the node page shows it (pure). A GPU's own status says only whether
// its hardware is usable (available, unhealthy, missing); whether work can get it depends on who
// holds it, on its node's status and on the node's reservation. The page showed "available" next
// to "Held by job …", and every GPU of a node in maintenance said "available" (issue 32).

type GpuStateKind = "held" | "idle" | "reserved_idle" | "unavailable" | "unhealthy" | "missing";

export interface GpuStateInput {
  status: string;
  holder: { kind: "job" | "endpoint replica" | "pod"; name: string; tenant: string } | null;
  nodeStatus: string;
  /** the reservation that holds the node now, if any */
  reservedFor: { tenant: string; until: Date } | null;
}

export interface GpuState {
  kind: GpuStateKind;
  /** a short badge: "held", "idle", "unavailable" */
  label: string;
  /** the sentence beside it */
  detail: string;
  tone: "green" | "indigo" | "sky" | "amber" | "red" | "neutral";
}

/** Why a node in this status takes no new work, in words ("the node is in maintenance"). */
function nodeStatusWords(status: string): string {
  switch (status) {
    case "available":
      return "the node is available";
    case "registered":
      return "the node has not reported its first heartbeat";
    case "draining":
      return "the node is draining: running work finishes, nothing new starts";
    case "maintenance":
      return "the node is in maintenance";
    case "quarantined":
      return "the node is quarantined";
    case "offline":
      return "the node is offline (no heartbeat)";
    default:
      return `the node is ${status.replace(/_/g, " ")}`;
  }
}

const until = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;

/**
 * In order: hardware first (missing, unhealthy), then who holds it (work keeps running on a
 * draining node), then why nothing new can start (the node's status), then a reservation that
 * keeps it for one tenant, else idle.
 */
export function gpuEffectiveState(g: GpuStateInput): GpuState {
  if (g.status === "missing") return { kind: "missing", label: "missing", detail: "The agent no longer reports this GPU", tone: "neutral" };
  if (g.status === "unhealthy")
    return { kind: "unhealthy", label: "unhealthy", detail: "Out of service until it is healthy again", tone: "red" };
  if (g.holder) {
    const note = g.nodeStatus === "available" ? "" : `; ${nodeStatusWords(g.nodeStatus)}`;
    return {
      kind: "held",
      label: "held",
      detail: `Held by ${g.holder.kind} ${g.holder.name} (${g.holder.tenant})${note}`,
      tone: "indigo",
    };
  }
  if (g.nodeStatus !== "available")
    return { kind: "unavailable", label: "unavailable", detail: `Nothing new starts: ${nodeStatusWords(g.nodeStatus)}`, tone: "amber" };
  if (g.reservedFor)
    return {
      kind: "reserved_idle",
      label: "reserved",
      detail: `Idle, reserved for ${g.reservedFor.tenant} until ${until(g.reservedFor.until)}: only its work starts here`,
      tone: "sky",
    };
  return { kind: "idle", label: "idle", detail: "Free for new work", tone: "green" };
}
