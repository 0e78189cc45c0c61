// The blast-radius cap, pure. Under the remediation advisory lock the service counts automatic
// quarantines inside the window and asks this which candidates may still be acted on.

export interface RemediationCandidate {
  node_id: string;
  cause: string;
}

export interface CapDecision<C extends RemediationCandidate> {
  quarantine: C[];
  capped: C[];
  used_after: number;
}

/**
 * Acts on candidates in the order given until `cap` quarantines are counted in the window;
 * the rest go to a human. A node appears once whatever the number of its faults.
 */
export function decideRemediations<C extends RemediationCandidate>(
  candidates: readonly C[],
  usedInWindow: number,
  cap: number,
): CapDecision<C> {
  const seen = new Set<string>();
  const quarantine: C[] = [];
  const capped: C[] = [];
  let used = Math.max(0, usedInWindow);
  for (const c of candidates) {
    if (seen.has(c.node_id)) continue;
    seen.add(c.node_id);
    if (used < cap) {
      quarantine.push(c);
      used++;
    } else {
      capped.push(c);
    }
  }
  return { quarantine, capped, used_after: used };
}
