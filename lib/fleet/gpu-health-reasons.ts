// Why a GPU is unhealthy, as stored in gpus.unhealthy_reason. Hardware reasons are sticky: only an
// operator returning the node to service (after inspection) clears them. An agent's plain
// "unhealthy" report clears when the agent reports the GPU healthy again.
export const AGENT_REPORTED = "agent_reported";
export const fatalXidReason = (xid: number) => `fatal_xid:${xid}`;
export const ECC_UNCORRECTED = "ecc_uncorrected";
export const REMAP_FAILURE = "remap_failure";

/** A reason as operators read it: "XID 79 — GPU has fallen off the bus" rather than "fatal_xid:79". */
export function describeUnhealthyReason(reason: string, xidName: (xid: number) => string): string {
  const m = /^fatal_xid:(\d+)$/.exec(reason);
  if (m) return `XID ${m[1]} — ${xidName(Number(m[1]))}`;
  return (
    {
      agent_reported: "reported unhealthy by the agent",
      ecc_uncorrected: "uncorrectable ECC errors",
      remap_failure: "row remapping failed",
    }[reason] ?? reason
  );
}
