import { describe, expect, it } from "vitest";
import { backgroundRunsBetween, databaseMaintenanceBetween } from "../../bench/lib/background-runs";

describe("what ran beside a benchmark's latency run", () => {
  it("the app's background runs between two readings: only jobs that ran, with their milliseconds", () => {
    const before = new Map([
      ["scheduler-cycle", { runs: 10, seconds: 0.5 }],
      ["billing-meter", { runs: 2, seconds: 0.1 }],
    ]);
    const after = new Map([
      ["scheduler-cycle", { runs: 14, seconds: 0.7 }],
      ["billing-meter", { runs: 2, seconds: 0.1 }],
      ["alerts-evaluate", { runs: 1, seconds: 0.066 }],
    ]);
    expect(backgroundRunsBetween(before, after)).toEqual({
      "scheduler-cycle": { runs: 4, ms: 200 },
      "alerts-evaluate": { runs: 1, ms: 66 },
    });
  });

  it("autovacuum's runs between two readings: over every table (one first seen after the start counts from zero) and on jobs", () => {
    const before = new Map([
      ["jobs", { autovacuums: 3, autoanalyzes: 5 }],
      ["gpus", { autovacuums: 1, autoanalyzes: 1 }],
    ]);
    const after = new Map([
      ["jobs", { autovacuums: 4, autoanalyzes: 7 }],
      ["gpus", { autovacuums: 1, autoanalyzes: 2 }],
      ["job_events", { autovacuums: 1, autoanalyzes: 0 }],
    ]);
    expect(databaseMaintenanceBetween(before, after)).toEqual({
      autovacuums: 2,
      autoanalyzes: 3,
      jobs_autovacuums: 1,
      jobs_autoanalyzes: 2,
    });
    expect(databaseMaintenanceBetween(after, after)).toEqual({
      autovacuums: 0,
      autoanalyzes: 0,
      jobs_autovacuums: 0,
      jobs_autoanalyzes: 0,
    });
  });
});
