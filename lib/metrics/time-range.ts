/**
 * Time ranges of the console's charts (pure): the presets of the range picker, a custom from–to,
 * the step each range is drawn at, and the full grid of buckets a chart plots so that time is
 * spaced evenly and a gap in the data shows as a gap, not as two neighbouring points.
 */

export const RANGE_PRESETS = {
  "1h": { seconds: 3_600, label: "1 h", words: "last hour" },
  "6h": { seconds: 6 * 3_600, label: "6 h", words: "last 6 hours" },
  "24h": { seconds: 86_400, label: "24 h", words: "last 24 hours" },
  "7d": { seconds: 7 * 86_400, label: "7 d", words: "last 7 days" },
} as const;
export type RangePreset = keyof typeof RANGE_PRESETS;
export const RANGE_KEYS = Object.keys(RANGE_PRESETS) as RangePreset[];

/** The longest custom range a chart draws (the per-minute rollups are kept 30 days by default). */
const MAX_RANGE_DAYS = 31;
/** Steps a chart may use, smallest first; a range takes the smallest that keeps it under MAX_POINTS. */
const STEPS_S = [60, 300, 900, 1_800, 3_600, 7_200, 21_600, 43_200, 86_400];
const MAX_POINTS = 200;

export interface TimeRange {
  key: RangePreset | "custom";
  from: Date;
  to: Date;
  stepS: number;
}

/**
 * The preset a chart opens on when the address names none: the page's own, or, when the data is
 * younger than that, the smallest preset that holds all of it (a fresh instance's half hour of
 * metrics drawn over the last hour, not as a sliver at the end of 24 hours). `dataSince`: when the
 * subject began (the fleet's first node, the endpoint's creation); null: nothing yet, the last hour.
 */
export function fittingPreset(pageDefault: RangePreset, dataSince: Date | null, now: Date): RangePreset {
  const ageS = dataSince ? (now.getTime() - dataSince.getTime()) / 1000 : 0;
  const limit = RANGE_PRESETS[pageDefault].seconds;
  return RANGE_KEYS.find((k) => RANGE_PRESETS[k].seconds >= Math.min(ageS, limit)) ?? pageDefault;
}

export function stepFor(spanS: number): number {
  return STEPS_S.find((s) => spanS / s <= MAX_POINTS) ?? STEPS_S[STEPS_S.length - 1]!;
}

const validDate = (v: string | undefined) => {
  if (!v) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
};

/**
 * The range a page's search parameters ask for: `range=1h|6h|24h|7d`, or `from` and `to` (any date
 * the browser's datetime-local input or an ISO string gives; read as UTC). Anything unusable falls
 * back to the default preset, so a hand-edited address never breaks a page.
 */
export function parseTimeRange(sp: { range?: string; from?: string; to?: string }, now: Date, fallback: RangePreset = "1h"): TimeRange {
  const from = validDate(sp.from && !/[zZ]|[+-]\d\d:?\d\d$/.test(sp.from) ? `${sp.from}Z` : sp.from);
  const to = validDate(sp.to && !/[zZ]|[+-]\d\d:?\d\d$/.test(sp.to) ? `${sp.to}Z` : sp.to);
  if (sp.range === "custom" || (!sp.range && (from || to))) {
    if (from && to && from < to && to.getTime() - from.getTime() <= MAX_RANGE_DAYS * 86_400_000) {
      const end = to > now ? now : to;
      if (from < end) return { key: "custom", from, to: end, stepS: stepFor((end.getTime() - from.getTime()) / 1000) };
    }
  }
  const key = sp.range && sp.range in RANGE_PRESETS ? (sp.range as RangePreset) : fallback;
  const seconds = RANGE_PRESETS[key].seconds;
  return { key, from: new Date(now.getTime() - seconds * 1000), to: now, stepS: stepFor(seconds) };
}

/** The start of every bucket of `stepS` seconds that overlaps [from, to), aligned to the epoch (as SQL's date_bin with the epoch origin). */
export function bucketGrid(from: Date, to: Date, stepS: number): number[] {
  const step = stepS * 1000;
  const out: number[] = [];
  for (let t = Math.floor(from.getTime() / step) * step; t < to.getTime(); t += step) out.push(t);
  return out;
}

/**
 * One row per bucket of the grid: the values of the point in that bucket, or nulls where none is
 * (a chart draws nulls as a gap). `keys` are the series every row carries.
 */
export function fillGaps<K extends string>(
  grid: number[],
  points: Array<{ t: number } & Partial<Record<K, number | null>>>,
  keys: readonly K[],
): Array<{ t: number } & Record<K, number | null>> {
  const byT = new Map(points.map((p) => [p.t, p]));
  return grid.map((t) => {
    const p = byT.get(t);
    const row = { t } as { t: number } & Record<K, number | null>;
    for (const k of keys) (row as Record<string, number | null>)[k] = p?.[k] ?? null;
    return row;
  });
}

/** "last 6 hours", or the custom span in UTC. */
export function describeRange(r: TimeRange): string {
  if (r.key !== "custom") return RANGE_PRESETS[r.key].words;
  return `${formatAxisTime(r.from.getTime(), r.to.getTime() - r.from.getTime(), true)} – ${formatAxisTime(r.to.getTime(), r.to.getTime() - r.from.getTime(), true)} UTC`;
}

/** "1-minute", "15-minute", "2-hour", "1-day": how long one point of the chart is. */
export function describeStep(stepS: number): string {
  if (stepS % 86_400 === 0) return `${stepS / 86_400}-day`;
  if (stepS % 3_600 === 0) return `${stepS / 3_600}-hour`;
  return `${Math.round(stepS / 60)}-minute`;
}

const pad = (n: number) => String(n).padStart(2, "0");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** An axis label in UTC: the time of day within a day, the date too over longer spans (or when asked). */
export function formatAxisTime(t: number, spanMs: number, withDate = false): string {
  const d = new Date(t);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return spanMs >= 86_400_000 || withDate ? `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${time}` : time;
}

/** The value a datetime-local input shows for a date (UTC, to the minute). */
export function toDateTimeLocal(d: Date): string {
  return d.toISOString().slice(0, 16);
}
