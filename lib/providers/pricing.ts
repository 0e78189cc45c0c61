// Our price for provider capacity, pure: cost × (1 + markup), rounded half up to a whole cent.
// Integer arithmetic only (the markup in hundredths of a percent, BigInt products), so no float
// rounding can move a price by a cent; tests/unit/provider-pricing.test.ts checks it with fast-check.

/** The markup in hundredths of a percent (25 → 2500, 12.345 → 1235, half up). */
export function markupBasisPoints(markupPct: number): number {
  if (!Number.isFinite(markupPct) || markupPct < 0) throw new RangeError(`markup must be a non-negative percentage, got ${markupPct}`);
  return Math.floor(markupPct * 100 + 0.5 + 1e-9);
}

/** cost × (1 + markupPct / 100), half up to a cent, for a whole number of cents. */
export function priceCents(costCents: number, markupPct: number): number {
  if (!Number.isSafeInteger(costCents) || costCents < 0) throw new RangeError(`cost must be whole cents, got ${costCents}`);
  const bp = BigInt(markupBasisPoints(markupPct));
  const n = BigInt(costCents) * (10_000n + bp);
  // half up: floor(n / 10000 + 1/2) = floor((2n + 10000) / 20000)
  return Number((2n * n + 10_000n) / 20_000n);
}

/** What a job of `gpus` GPUs costs at a price per GPU-hour over `seconds`, half up to a cent. */
export function estimateCents(pricePerGpuHourCents: number, gpus: number, seconds: number): number {
  return Math.floor((pricePerGpuHourCents * gpus * Math.max(0, seconds)) / 3600 + 0.5);
}
