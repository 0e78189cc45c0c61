import { describe, expect, it } from "vitest";
import { endpointHeadline } from "@/lib/endpoints/endpoint-headline";
import type { SlaReport } from "@/lib/endpoints/sla";
import { fittingPreset } from "@/lib/metrics/time-range";

// Two things a page must not claim (issue 32): a green "Ready" over a missed SLA, and a 24-hour
// chart of an instance that has existed for twenty minutes.

const now = new Date("2026-12-01T12:00:00Z");
const ago = (min: number) => new Date(now.getTime() - min * 60_000);

describe("a chart's default range", () => {
  it("is the page's own once there is that much data, else the smallest preset that holds it all", () => {
    expect(fittingPreset("24h", ago(3 * 24 * 60), now)).toBe("24h");
    expect(fittingPreset("24h", ago(20), now)).toBe("1h");
    expect(fittingPreset("24h", ago(3 * 60), now)).toBe("6h");
    expect(fittingPreset("24h", ago(10 * 60), now)).toBe("24h");
    expect(fittingPreset("24h", null, now)).toBe("1h");
    expect(fittingPreset("7d", ago(2 * 24 * 60), now)).toBe("7d");
    expect(fittingPreset("1h", ago(3 * 24 * 60), now)).toBe("1h");
  });
});

const sla = (o: Partial<SlaReport>): SlaReport =>
  ({
    availability_pct: 100,
    p95_compliance_pct: 100,
    targets: { p95_ms: 450, availability_pct: 99.5, p95_objective_pct: 95 },
    compliant: { availability: true, p95: true },
    ...o,
  }) as SlaReport;

describe("an endpoint's headline", () => {
  it("is the status when every objective is met", () => {
    expect(
      endpointHeadline({
        status: "ready",
        statusReason: "2 of 2 replicas ready",
        now: sla({}),
        windowWords: "the last 15 min",
        alertFiring: false,
      }),
    ).toEqual({
      tone: "green",
      title: "Ready",
      text: "2 of 2 replicas ready",
      missed: [],
    });
  });

  it("says a ready endpoint misses its SLA, which objective, by how much and over which window", () => {
    const h = endpointHeadline({
      status: "ready",
      statusReason: "2 of 2 replicas ready",
      now: sla({ p95_compliance_pct: 78, compliant: { availability: true, p95: false } }),
      windowWords: "the last 15 min",
      alertFiring: true,
    });
    expect(h).toEqual({
      tone: "red",
      title: "Ready, missing its SLA",
      text: "2 of 2 replicas ready, but p95 within 450 ms in 78.0 % of minutes against 95 %, the last 15 min.",
      missed: ["latency"],
    });
  });

  it("keeps the breach while its alert still fires, and judges nothing while the endpoint does not serve", () => {
    expect(endpointHeadline({ status: "ready", statusReason: null, now: sla({}), windowWords: "w", alertFiring: true })).toMatchObject({
      tone: "red",
      text: "its SLA alert is firing.",
    });
    expect(
      endpointHeadline({
        status: "stopped",
        statusReason: "stopped by admin",
        now: sla({ compliant: { availability: false, p95: null } }),
        windowWords: "w",
        alertFiring: false,
      }),
    ).toMatchObject({ tone: "sky", title: "Stopped" });
  });
});
