// Which replica takes a request, pure: the one with the fewest requests outstanding (sent to it by
// this gateway process and not finished), among those in rotation and not already tried for this
// request; ties go round-robin so equal replicas share the traffic evenly.

export interface Candidate {
  id: string;
  outstanding: number;
}

export function pickReplica<C extends Candidate>(candidates: readonly C[], tried: ReadonlySet<string>, turn: number): C | null {
  let best: C | null = null;
  let bestRank = Infinity;
  const n = candidates.length;
  for (let k = 0; k < n; k++) {
    // start the scan at a different place each turn: the first of equals is not always the same
    const c = candidates[(turn + k) % n]!;
    if (tried.has(c.id)) continue;
    if (c.outstanding < bestRank) {
      best = c;
      bestRank = c.outstanding;
    }
  }
  return best;
}
