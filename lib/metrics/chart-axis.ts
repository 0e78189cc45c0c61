// A chart's value axis, pure. The charts draw five ticks from 0 (the charting library's default);
// left to themselves over a small range they fell between whole numbers while their labels were
// rounded to whole numbers, so the billing chart read "$2, $2, $1, $1, $0" (issue 32). Here the
// axis ends at four "nice" steps (1, 2, 2.5 or 5 times a power of ten) above the data, so every tick
// is a multiple of the step, and its labels carry as many decimals as the step needs: each label
// is a different number.

export interface ValueAxis {
  /** the top of the axis: 4 × step, at or above the data's maximum */
  max: number;
  step: number;
  /** decimals a tick's label needs to tell it from its neighbours */
  decimals: number;
}

const NICE = [1, 2, 2.5, 5, 10];
const INTERVALS = 4;

export function niceAxis(dataMax: number, minStep = 0, steps: readonly number[] = NICE): ValueAxis {
  const want = Math.max(Number.isFinite(dataMax) && dataMax > 0 ? dataMax / INTERVALS : 0, minStep, Number.EPSILON);
  const power = 10 ** Math.floor(Math.log10(want));
  const step = steps.map((n) => n * power).find((s) => s >= want * (1 - 1e-9)) ?? 10 * power;
  // 2.5 × 10^k needs one decimal more than 10^k
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9) + (Math.abs(step / power - 2.5) < 1e-9 ? 1 : 0));
  return { max: roundTo(step * INTERVALS, decimals), step: roundTo(step, decimals), decimals };
}

/** An axis for dollars: steps of whole cents, and no $0.025 steps (a label would round it). */
export function moneyAxis(dataMax: number): ValueAxis {
  const a = niceAxis(dataMax, 0.01);
  return a.step < 1 ? niceAxis(dataMax, 0.01, [1, 2, 5, 10]) : a;
}

/** An axis for counts (requests, views): whole steps only. */
export function countAxis(dataMax: number): ValueAxis {
  return niceAxis(dataMax, 1);
}

const roundTo = (v: number, decimals: number) => Number(v.toFixed(decimals));

/** Whether `v` is one of the axis's ticks (the formatter labels ticks with the axis's decimals, other values in full). */
function isTick(v: number, axis: ValueAxis): boolean {
  const k = v / axis.step;
  return Math.abs(k - Math.round(k)) < 1e-6;
}

/** A value as the axis labels it: a tick with the decimals the axis needs, anything else (a tooltip's exact figure) with `detail`. */
export function formatOnAxis(v: number, axis: ValueAxis, detail: number): string {
  const d = isTick(v, axis) ? axis.decimals : Math.max(detail, axis.decimals);
  return v.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** Dollars on an axis: cents show whenever the step is under a dollar ("$0.50", never "$0.5"). */
export function formatDollarsOnAxis(v: number, axis: ValueAxis): string {
  const d = isTick(v, axis) ? (axis.step < 1 ? 2 : 0) : 2;
  return `$${v.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d })}`;
}
