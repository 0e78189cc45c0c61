// The gateway's latency figures, pure: a fixed histogram per endpoint and minute. Fixed buckets
// make figures from many gateway processes add up exactly (counts sum; percentiles are read from
// the summed counts), which averaging each process's own p95 would not. A percentile is the upper
// bound of the bucket it falls in (never optimistic), at most ~1.5× the true value over 1 ms.

/** Upper bounds of the buckets, in ms; the last bucket holds everything slower. */
const LATENCY_BOUNDS_MS: readonly number[] = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 30_000,
  60_000, 120_000, 300_000,
];
const HISTOGRAM_SIZE = LATENCY_BOUNDS_MS.length + 1;

export type Histogram = number[];

export const emptyHistogram = (): Histogram => new Array<number>(HISTOGRAM_SIZE).fill(0);

function bucketOf(ms: number): number {
  let lo = 0;
  let hi = LATENCY_BOUNDS_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms <= LATENCY_BOUNDS_MS[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function record(h: Histogram, ms: number): void {
  h[bucketOf(ms)]! += 1;
}

/** Sums histograms of the same shape (minutes, processes). */
export function merge(into: Histogram, from: readonly number[]): Histogram {
  for (let i = 0; i < HISTOGRAM_SIZE; i++) into[i]! += Number(from[i] ?? 0);
  return into;
}

/** The q-quantile (0–1) in ms: the upper bound of the bucket holding it; null for an empty histogram. */
export function quantile(h: readonly number[], q: number): number | null {
  const total = h.reduce((s, n) => s + Number(n), 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < h.length; i++) {
    seen += Number(h[i]);
    if (seen >= rank) return i < LATENCY_BOUNDS_MS.length ? LATENCY_BOUNDS_MS[i]! : LATENCY_BOUNDS_MS.at(-1)! * 2;
  }
  return LATENCY_BOUNDS_MS.at(-1)! * 2;
}
