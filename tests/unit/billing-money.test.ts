import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { invoiceCsv } from "@/lib/billing/invoice-documents";
import { currentMonth, formatCents, invoiceLabel, lastFullMonth, segmentAmountCents } from "@/lib/billing/money";

describe("money", () => {
  it("prices a segment in whole cents, half up, once", () => {
    expect(segmentAmountCents(3600, 249)).toBe(249);
    expect(segmentAmountCents(1, 1800)).toBe(1); // 0.5 ¢ rounds up
    expect(segmentAmountCents(1, 1799)).toBe(0);
    expect(segmentAmountCents(0, 999)).toBe(0);
  });
  it("never drifts more than half a cent per segment from the exact price (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 100_000 }), (s, r) => {
        expect(Math.abs(segmentAmountCents(s, r) - (s * r) / 3600)).toBeLessThanOrEqual(0.5);
      }),
    );
  });
  it("formats cents as dollars and invoice numbers with six digits", () => {
    expect(formatCents(123456)).toBe("$1,234.56");
    expect(formatCents(5n)).toBe("$0.05");
    expect(invoiceLabel(42)).toBe("INV-000042");
  });
  it("the default period is the last full calendar month, in UTC", () => {
    expect(lastFullMonth(new Date("2026-03-01T00:05:00Z"))).toEqual({
      start: new Date("2026-02-01T00:00:00Z"),
      end: new Date("2026-03-01T00:00:00Z"),
    });
    expect(lastFullMonth(new Date("2026-01-15T12:00:00Z"))).toEqual({
      start: new Date("2025-12-01T00:00:00Z"),
      end: new Date("2026-01-01T00:00:00Z"),
    });
    expect(currentMonth(new Date("2026-12-31T23:59:59Z"))).toEqual({
      start: new Date("2026-12-01T00:00:00Z"),
      end: new Date("2027-01-01T00:00:00Z"),
    });
  });
});

describe("invoice CSV", () => {
  it("one row per job and a total; quotes commas and defuses spreadsheet formulas", () => {
    const { filename, body } = invoiceCsv({
      number: 7,
      periodStart: new Date("2026-10-01T00:00:00Z"),
      periodEnd: new Date("2026-11-01T00:00:00Z"),
      amountCents: 4700n,
      lines: [
        { gpuType: "H100", jobId: "j1", endpointId: null, description: "train, big (8 × H100)", gpuSeconds: 7200n, amountCents: 1000n },
        { gpuType: "H100", jobId: null, endpointId: "e1", description: '=HYPERLINK("x")', gpuSeconds: 3600n, amountCents: 500n },
        {
          gpuType: "H100",
          jobId: null,
          endpointId: null,
          reservationId: "r1",
          description: "Reservation r1 (2 whole nodes)",
          gpuSeconds: 57600n,
          amountCents: 3200n,
        },
      ],
    });
    expect(filename).toBe("INV-000007.csv");
    const rows = body.trim().split("\r\n");
    expect(rows).toHaveLength(5);
    expect(rows[0]).toContain("gpu_type,job_id,endpoint_id,description");
    expect(rows[0]).toMatch(/,reservation_id,covered_by_reservation_id$/);
    expect(rows[3]).toMatch(/,,,Reservation r1 \(2 whole nodes\),57600,16\.0000,3200,32\.00,r1,$/);
    expect(rows[1]).toContain(",j1,,");
    expect(rows[2]).toContain(",,e1,");
    expect(rows[1]).toContain('"train, big (8 × H100)"');
    expect(rows[2]).toContain(`"'=HYPERLINK(""x"")"`);
    expect(rows[4]).toMatch(/Total,68400,,4700,47\.00,,$/);
  });
});
