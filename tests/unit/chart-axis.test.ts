import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countAxis, formatDollarsOnAxis, formatOnAxis, moneyAxis, niceAxis } from "@/lib/metrics/chart-axis";

const ticks = (a: { max: number; step: number }) => Array.from({ length: 5 }, (_, i) => Number((i * a.step).toFixed(10)));

describe("a chart's value axis", () => {
  it("ends at four nice steps over the data, so the billing chart's $0–$2.47 reads $0, $1, $2… never $2, $2, $1", () => {
    const a = moneyAxis(2.47);
    expect(a).toEqual({ max: 4, step: 1, decimals: 0 });
    expect(ticks(a).map((t) => formatDollarsOnAxis(t, a))).toEqual(["$0", "$1", "$2", "$3", "$4"]);
    const small = moneyAxis(0.8);
    expect(ticks(small).map((t) => formatDollarsOnAxis(t, small))).toEqual(["$0.00", "$0.20", "$0.40", "$0.60", "$0.80"]);
    const quarter = niceAxis(9.5);
    expect(quarter).toEqual({ max: 10, step: 2.5, decimals: 1 });
    expect(ticks(quarter).map((t) => formatOnAxis(t, quarter, 0))).toEqual(["0.0", "2.5", "5.0", "7.5", "10.0"]);
  });

  it("labels every tick differently and holds the data, for any maximum", () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-4, max: 1e9, noNaN: true }), (max) => {
        const a = niceAxis(max);
        expect(a.max).toBeGreaterThanOrEqual(max * (1 - 1e-9));
        // no wider than needed: the next smaller nice axis would not hold the data
        expect(a.max).toBeLessThanOrEqual(max * 2.5 + 1e-12);
        const labels = ticks(a).map((t) => formatOnAxis(t, a, 0));
        expect(new Set(labels).size).toBe(5);
        const m = moneyAxis(max);
        expect(m.max).toBeGreaterThanOrEqual(max * (1 - 1e-9));
        expect(new Set(ticks(m).map((t) => formatDollarsOnAxis(t, m))).size).toBe(5);
      }),
    );
  });

  it("keeps counts whole, and values off the ticks (tooltips) in full", () => {
    expect(countAxis(2)).toMatchObject({ step: 1, max: 4, decimals: 0 });
    expect(countAxis(0)).toMatchObject({ step: 1, max: 4 });
    const a = moneyAxis(2.47);
    expect(formatDollarsOnAxis(2.47, a)).toBe("$2.47");
    expect(formatOnAxis(1.234, niceAxis(3), 2)).toBe("1.23");
  });
});
