import { describe, expect, it } from "vitest";
import { listAlertsQuery } from "@/lib/alerts/schemas";
import { ALERT_EVENT_TYPES } from "@/lib/alerts/rule-types";
import { isUuid } from "@/lib/ids";
import { BLOCK_REASONS } from "@/lib/jobs/job-lifecycle";
import { jobJsonSchema } from "@/lib/jobs/schemas";

// What the one vocabulary promises at the edges: every value the database can hold is one the
// published schemas accept, and nothing else is.

describe("closed lists at the API's edge", () => {
  it("filters alerts by every type the database can hold, and refuses any other", () => {
    for (const t of ALERT_EVENT_TYPES) expect(listAlertsQuery.safeParse({ rule_type: t }).success).toBe(true);
    expect(listAlertsQuery.safeParse({ rule_type: "reservation_degraded" }).success).toBe(true);
    expect(listAlertsQuery.safeParse({ rule_type: "gpu_xidd" }).success).toBe(false);
  });

  it("publishes every reason a job can be blocked for, a suspended tenant's included", () => {
    expect(BLOCK_REASONS).toContain("suspended");
    const shape = jobJsonSchema.shape.block_reason;
    for (const r of BLOCK_REASONS) expect(shape.safeParse(r).success).toBe(true);
    expect(shape.safeParse("paused").success).toBe(false);
  });
});

describe("isUuid", () => {
  it("takes PostgreSQL's ids in either case and nothing shaped like one", () => {
    expect(isUuid("0b6f1c1e-2f7a-4c3e-9d1a-5e6f7a8b9c0d")).toBe(true);
    expect(isUuid("0B6F1C1E-2F7A-4C3E-9D1A-5E6F7A8B9C0D")).toBe(true);
    for (const bad of [
      "-".repeat(36),
      "0b6f1c1e2f7a4c3e9d1a5e6f7a8b9c0d----",
      "0b6f1c1e-2f7a-4c3e-9d1a-5e6f7a8b9c0",
      "",
      undefined,
      null,
      7,
    ])
      expect(isUuid(bad)).toBe(false);
  });
});
