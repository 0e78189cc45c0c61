import { describe, expect, it } from "vitest";
import { silenceFor, silenceState, type Silence } from "@/lib/alerts/silence-match";
import {
  balanceLevel,
  depositReference,
  estimateCents,
  formatDuration,
  isNegligibleLine,
  projectedZeroAt,
  rateFor,
} from "@/lib/billing/money";
import { describeNodeImpact, nodeWorkload } from "@/lib/fleet/node-impact";
import { csvCell, toCsv } from "@/lib/http/csv";
import { dayRange, listHref, readListParams } from "@/lib/http/list-params";
import { jobFit, MAX_JOB_GPUS, quotaWarning } from "@/lib/jobs/job-fit";
import { mayCancelJob } from "@/lib/jobs/job-permissions";
import { jobListParams } from "@/lib/jobs/schemas";
import { bucketGrid, describeRange, fillGaps, formatAxisTime, parseTimeRange, stepFor } from "@/lib/metrics/time-range";

const NOW = new Date("2026-11-30T15:07:30Z");

describe("chart time ranges", () => {
  it("presets cover what they say, at a step that keeps a chart readable", () => {
    const h = parseTimeRange({}, NOW);
    expect(h).toMatchObject({ key: "1h", stepS: 60 });
    expect(NOW.getTime() - h.from.getTime()).toBe(3_600_000);
    expect(parseTimeRange({ range: "6h" }, NOW).stepS).toBe(300);
    expect(parseTimeRange({ range: "24h" }, NOW).stepS).toBe(900);
    expect(parseTimeRange({ range: "7d" }, NOW).stepS).toBe(3_600);
    expect(parseTimeRange({ range: "nonsense" }, NOW, "24h").key).toBe("24h");
    for (const span of [3_600, 86_400, 7 * 86_400, 31 * 86_400]) expect(span / stepFor(span)).toBeLessThanOrEqual(200);
  });

  it("takes a custom from–to in UTC (as datetime-local sends it), never past now, and falls back when it makes no sense", () => {
    const c = parseTimeRange({ range: "custom", from: "2026-11-29T08:00", to: "2026-11-29T20:00" }, NOW);
    expect(c).toMatchObject({ key: "custom", stepS: 300 });
    expect(c.from.toISOString()).toBe("2026-11-29T08:00:00.000Z");
    expect(describeRange(c)).toBe("29 Nov 08:00 – 29 Nov 20:00 UTC");
    expect(parseTimeRange({ range: "custom", from: "2026-11-30T15:00", to: "2026-12-30T00:00" }, NOW).to).toEqual(NOW);
    expect(parseTimeRange({ range: "custom", from: "2026-11-30T10:00", to: "2026-11-29T10:00" }, NOW).key).toBe("1h");
    expect(parseTimeRange({ range: "custom", from: "2026-01-01T00:00", to: "2026-11-29T00:00" }, NOW).key).toBe("1h");
  });

  it("plots every bucket of the range, gaps as nulls, so time is evenly spaced", () => {
    const grid = bucketGrid(new Date("2026-11-30T14:14:20Z"), new Date("2026-11-30T14:40:00Z"), 60);
    expect(grid).toHaveLength(26);
    expect(grid[0]).toBe(Date.parse("2026-11-30T14:14:00Z"));
    const rows = fillGaps(
      grid,
      [
        { t: Date.parse("2026-11-30T14:14:00Z"), v: 1 },
        { t: Date.parse("2026-11-30T14:15:00Z"), v: 2 },
        { t: Date.parse("2026-11-30T14:38:00Z"), v: 3 },
      ],
      ["v"] as const,
    );
    expect(rows.map((r) => r.v).filter((v) => v !== null)).toEqual([1, 2, 3]);
    expect(rows[2]!.v).toBeNull();
    expect(rows.findIndex((r) => r.v === 3)).toBe(24);
  });

  it("labels the axis with the time of day, and the date once a chart spans a day", () => {
    expect(formatAxisTime(Date.parse("2026-11-30T09:05:00Z"), 3_600_000)).toBe("09:05");
    expect(formatAxisTime(Date.parse("2026-11-30T09:05:00Z"), 86_400_000)).toBe("30 Nov 09:05");
  });
});

describe("list parameters and CSV", () => {
  it("keeps the valid filters of a hand-edited address and drops only the bad one", () => {
    const q = readListParams(jobListParams, { status: "running", sort: "bogus", page: "2", per_page: "7", q: "llama" });
    expect(q).toMatchObject({ status: "running", sort: "newest", page: 2, per_page: 50, q: "llama" });
    expect(dayRange("2026-11-01", "2026-11-30")).toEqual({ gte: new Date("2026-11-01T00:00:00Z"), lt: new Date("2026-12-01T00:00:00Z") });
    expect(dayRange()).toBeUndefined();
  });

  it("builds page, sort and export links from the current view, resetting the page", () => {
    const q = { q: "x y", status: "waiting", page: 3, per_page: 50 };
    expect(listHref("/admin/jobs", q, { sort: "gpus" })).toBe("/admin/jobs?q=x+y&status=waiting&sort=gpus");
    expect(listHref("/admin/jobs", q, { page: 4 })).toBe("/admin/jobs?q=x+y&status=waiting&page=4");
  });

  it("writes RFC 4180 CSV and defuses spreadsheet formulas", () => {
    expect(csvCell('say "hi", then go')).toBe('"say ""hi"", then go"');
    expect(csvCell("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell(null)).toBe("");
    expect(toCsv(["a", "b"], [[1, "two\nlines"]])).toBe('a,b\r\n1,"two\nlines"\r\n');
  });
});

describe("job size in the tenant's terms", () => {
  const fit = { quota: 32, inUse: 28, capacity: { H100: 64, A100: 16 } };

  it("says a job larger than the quota or the fleet could never start, in plain words", () => {
    expect(jobFit(fit, 5_000, "H100")).toEqual({
      level: "never",
      message:
        "5,000 GPUs is more than your organisation's quota of 32 and than the 64 GPUs of type H100 in the fleet: this job could never start. Ask your operator for a larger quota.",
    });
    expect(jobFit({ ...fit, quota: 100 }, 20, "A100").message).toBe(
      "The fleet has 16 GPUs of type A100 in all: a job of 20 could never start.",
    );
    expect(jobFit({ quota: 10_000, inUse: 0, capacity: { H100: 9_000 } }, 5_000, "H100").message).toMatch(/more than 4,096/);
    expect(MAX_JOB_GPUS).toBe(4096);
  });

  it("warns that a job over the free quota will wait, and how many GPUs must free up", () => {
    expect(jobFit(fit, 8, "H100")).toEqual({
      level: "wait",
      message: "Your organisation holds 28 of its 32 GPUs now: this job will wait until 4 GPUs are free.",
    });
    expect(jobFit(fit, 4, "H100")).toEqual({ level: "ok", message: null });
  });

  it("warns operators of a quota no fleet of this size can fill", () => {
    expect(quotaWarning(64, 128)).toBeNull();
    expect(quotaWarning(5_000, 128)).toBe("The fleet has 128 GPUs in all: a quota of 5,000 is 39.1× that and can never be used in full.");
  });
});

describe("who may cancel a job", () => {
  const job = { tenantId: "t1", submittedBy: "u1" };
  it("admins and operators any, members their own only, nobody another tenant's", () => {
    expect(mayCancelJob({ kind: "operator", label: "op" }, job)).toBe(true);
    expect(mayCancelJob({ kind: "tenant", tenantId: "t1", role: "tenant_admin", label: "a" }, job)).toBe(true);
    expect(mayCancelJob({ kind: "tenant", tenantId: "t1", role: "tenant_member", userId: "u1", label: "m" }, job)).toBe(true);
    expect(mayCancelJob({ kind: "tenant", tenantId: "t1", role: "tenant_member", userId: "u2", label: "m" }, job)).toBe(false);
    expect(
      mayCancelJob(
        { kind: "tenant", tenantId: "t1", role: "tenant_member", userId: "u2", label: "m" },
        { tenantId: "t1", submittedBy: null },
      ),
    ).toBe(false);
    expect(mayCancelJob({ kind: "tenant", tenantId: "t2", role: "tenant_admin", label: "a" }, job)).toBe(false);
    expect(mayCancelJob({ kind: "agent", clusterId: "c", keyId: "k", label: "ag" }, job)).toBe(false);
  });
});

describe("money the console shows", () => {
  it("estimates as the meter bills, and projects when a prepaid balance runs out", () => {
    expect(rateFor({ H100: 249, "*": 100 }, "H100")).toBe(249);
    expect(rateFor({ "*": 100 }, "L4")).toBe(100);
    expect(rateFor({}, "L4")).toBeNull();
    expect(estimateCents(4, 249, 3600)).toBe(996);
    expect(projectedZeroAt(996, 498, NOW)!.toISOString()).toBe("2026-11-30T17:07:30.000Z");
    expect(projectedZeroAt(0, 498, NOW)).toBeNull();
    expect(projectedZeroAt(500, 0, NOW)).toBeNull();
    expect(balanceLevel(0, 0)).toBe("empty");
    expect(balanceLevel(1_000, 100)).toBe("low");
    expect(balanceLevel(10_000, 100)).toBe("ok");
    expect(balanceLevel(10, 0)).toBe("ok");
    expect(formatDuration(200 * 60_000)).toBe("3 h 20 min");
    expect(formatDuration(52 * 3_600_000)).toBe("2 days 4 h");
    expect(depositReference("1a2b3c4d-0000-4000-8000-000000000000")).toBe("GF-1A2B3C4D");
  });

  it("leaves lines of a few seconds that cost nothing off invoices", () => {
    expect(isNegligibleLine(12, 0)).toBe(true);
    expect(isNegligibleLine(40, 0)).toBe(false);
    expect(isNegligibleLine(12, 1)).toBe(false);
  });
});

describe("silences and maintenance windows", () => {
  const base: Silence = {
    id: "s",
    kind: "silence",
    ruleId: null,
    ruleType: null,
    clusterId: null,
    nodeId: null,
    subjectType: null,
    subjectId: null,
    startsAt: new Date("2026-11-30T15:00:00Z"),
    endsAt: new Date("2026-11-30T16:00:00Z"),
    endedAt: null,
  };
  const alert = { ruleId: "r1", ruleType: "node_unreachable", clusterId: "c1", nodeId: "n1", subjectType: "node", subjectId: "n1" };

  it("match on every scope they name, only while they last", () => {
    expect(silenceFor(alert, [{ ...base, nodeId: "n1" }], NOW)?.id).toBe("s");
    expect(silenceFor(alert, [{ ...base, clusterId: "c1", ruleType: "node_unreachable" }], NOW)).not.toBeNull();
    expect(silenceFor(alert, [{ ...base, clusterId: "c1", ruleType: "gpu_xid" }], NOW)).toBeNull();
    expect(silenceFor(alert, [{ ...base, ruleId: "r1", subjectType: "node", subjectId: "n2" }], NOW)).toBeNull();
    expect(silenceFor(alert, [{ ...base, nodeId: "n1", endedAt: new Date("2026-11-30T15:05:00Z") }], NOW)).toBeNull();
    expect(
      silenceFor(
        alert,
        [{ ...base, nodeId: "n1", startsAt: new Date("2026-11-30T18:00:00Z"), endsAt: new Date("2026-11-30T20:00:00Z") }],
        NOW,
      ),
    ).toBeNull();
    expect(silenceState({ ...base, startsAt: new Date("2026-11-30T18:00:00Z") }, NOW)).toBe("upcoming");
    expect(silenceState({ ...base, endsAt: new Date("2026-11-30T15:01:00Z") }, NOW)).toBe("expired");
  });
});

describe("what a node's lifecycle change does to its work", () => {
  const gpus = [
    {
      allocatedJob: { id: "j1", name: "train", gpuCount: 16, startedAt: NOW, durationS: 600, tenant: { name: "Acme" } },
      allocatedReplica: null,
    },
    {
      allocatedJob: { id: "j1", name: "train", gpuCount: 16, startedAt: NOW, durationS: 600, tenant: { name: "Acme" } },
      allocatedReplica: null,
    },
    {
      allocatedJob: null,
      allocatedReplica: { id: "r1", status: "ready", endpoint: { id: "e1", name: "chat", tenant: { name: "Helix" } } },
    },
    { allocatedJob: null, allocatedReplica: null },
  ];
  it("lists each job and replica once, with the GPUs it holds here", () => {
    const w = nodeWorkload(gpus);
    expect(w.jobs).toEqual([expect.objectContaining({ id: "j1", gpusHere: 2, gpusTotal: 16 })]);
    expect(w.replicas).toEqual([expect.objectContaining({ id: "r1", endpoint: "chat", gpusHere: 1 })]);
  });

  it("says what drain and maintenance do to them before anything happens", () => {
    const w = nodeWorkload(gpus);
    expect(describeNodeImpact("draining", w)).toEqual([
      "No new work is placed on this node.",
      "1 running job keeps running until it ends.",
      "1 endpoint replica moves to other nodes; each keeps serving until its replacement is ready.",
    ]);
    expect(describeNodeImpact("maintenance", w)[1]).toBe("1 running job is stopped and queued again (its retries are not spent).");
    expect(describeNodeImpact("quarantined", { jobs: [], replicas: [] }).slice(1)).toEqual([
      "No job runs here now.",
      "No endpoint replica runs here.",
    ]);
  });
});
