// Why a GPU is unhealthy, as stored in gpus.unhealthy_reason. Hardware reasons are sticky: only an
// operator returning the node to service (after inspection) clears them. An agent's plain
// "unhealthy" report clears when the agent reports the GPU healthy again.
export const AGENT_REPORTED = "agent_reported";
export const fatalXidReason = (xid: number) => `fatal_xid:${xid}`;
export const ECC_UNCORRECTED = "ecc_uncorrected";
export const REMAP_FAILURE = "remap_failure";

export function isStickyReason(reason: string | null): boolean {
  return reason !== null && reason !== AGENT_REPORTED;
}
