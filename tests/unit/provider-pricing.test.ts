import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { builtInGpuType, mapGpuType } from "@/lib/providers/gpu-types";
import { estimateCents, markupBasisPoints, priceCents } from "@/lib/providers/pricing";
import { retryAfterSeconds } from "@/lib/providers/http";

// Our price is cost × (1 + markup), half up to a cent. Checked against exact rational arithmetic
// (BigInt numerators over 10,000 × 100): the price is the nearest cent, ties going up.

describe("priceCents", () => {
  it("examples: 25 % on 199 → 248.75 → 249; 10 % on 5 → 5.5 → 6; 0 % is the cost; 12.5 % on 100 → 112.5 → 113", () => {
    expect(priceCents(199, 25)).toBe(249);
    expect(priceCents(5, 10)).toBe(6);
    expect(priceCents(123, 0)).toBe(123);
    expect(priceCents(100, 12.5)).toBe(113);
    expect(priceCents(0, 25)).toBe(0);
  });

  it("is the exact product rounded half up, for every cost and markup in hundredths of a percent", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 100_000 }), (cost, bp) => {
        const pct = bp / 100;
        const exact = BigInt(cost) * BigInt(10_000 + bp); // price × 10,000
        const price = BigInt(priceCents(cost, pct));
        // |price × 10000 − exact| ≤ 5000, and a tie (exactly 5000 under) rounds up
        const diff = price * 10_000n - exact;
        return diff > -5_000n && diff <= 5_000n;
      }),
    );
  });

  it("never prices under the cost, and more markup never lowers the price", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        (cost, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          return priceCents(cost, lo / 100) >= cost && priceCents(cost, hi / 100) >= priceCents(cost, lo / 100);
        },
      ),
    );
  });

  it("refuses what is not whole cents or a percentage", () => {
    expect(() => priceCents(1.5, 10)).toThrow(RangeError);
    expect(() => priceCents(-1, 10)).toThrow(RangeError);
    expect(() => markupBasisPoints(-3)).toThrow(RangeError);
    expect(markupBasisPoints(12.345)).toBe(1235);
  });

  it("estimates half up: 249 c/GPU-h × 2 GPUs × 30 min = 249 c", () => {
    expect(estimateCents(249, 2, 1800)).toBe(249);
    expect(estimateCents(249, 1, 1)).toBe(0);
  });
});

describe("GPU types", () => {
  it("reads the model out of each provider's naming", () => {
    expect(builtInGpuType("NVIDIA H100 80GB HBM3")).toBe("H100");
    expect(builtInGpuType("NVIDIA A100 80GB PCIe")).toBe("A100");
    expect(builtInGpuType("NVIDIA GeForce RTX 4090")).toBe("RTX4090");
    expect(builtInGpuType("NVIDIA RTX A6000")).toBe("A6000");
    expect(builtInGpuType("gpu_8x_h100_sxm5")).toBe("H100");
    expect(builtInGpuType("H100 (80 GB PCIe)")).toBe("H100");
    expect(builtInGpuType("GH200 (96 GB)")).toBe("GH200");
    expect(builtInGpuType("L40S")).toBe("L40S");
    expect(builtInGpuType("RTX 4090")).toBe("RTX4090");
    expect(builtInGpuType("Tesla P4")).toBeNull();
  });

  it("the operator's mapping wins, including 'never' (null)", () => {
    const overrides = new Map<string, string | null>([
      ["H100 SXM", "H100-SXM"],
      ["RTX 4090", null],
    ]);
    expect(mapGpuType("H100 SXM", overrides)).toBe("H100-SXM");
    expect(mapGpuType("RTX 4090", overrides)).toBeNull();
    expect(mapGpuType("A100 PCIE", overrides)).toBe("A100");
  });
});

describe("Retry-After", () => {
  it("reads delta-seconds and HTTP dates (RFC 9110), and nothing else", () => {
    expect(retryAfterSeconds("17")).toBe(17);
    expect(retryAfterSeconds(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThanOrEqual(29);
    expect(retryAfterSeconds("soon")).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
