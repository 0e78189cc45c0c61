// Small figures helpers shared by the benchmarks and the soak.

/** The p-th percentile of ascending `sorted` (nearest rank); 0 for no samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The median of unsorted figures (the upper middle of an even count, as percentile(…, 50) gives). */
export const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** A seeded generator (mulberry32): the same seed draws the same numbers, so a run can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
