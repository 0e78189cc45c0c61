import { describe, expect, it } from "vitest";
import { gpuHealth, nodeHealth } from "@/lib/fleet/health";
import { classifyXid, FATAL_XIDS, firstFatalXid, isFatalXid, XID_POLICY } from "@/lib/fleet/xid-policy";

describe("XID policy", () => {
  it.each([48, 64, 74, 79, 95])("XID %i is fatal", (x) => expect(isFatalXid(x)).toBe(true));
  it.each([13, 31, 43, 45, 68])("XID %i is an application error, not fatal", (x) => {
    expect(isFatalXid(x)).toBe(false);
    expect(classifyXid(x).severity).toBe("application");
  });
  it.each([63, 92, 94])("XID %i is informational, not fatal", (x) => {
    expect(isFatalXid(x)).toBe(false);
    expect(classifyXid(x).severity).toBe("informational");
  });
  it("treats unlisted XIDs as unknown rather than fatal", () => {
    expect(classifyXid(9999).severity).toBe("unknown");
    expect(isFatalXid(9999)).toBe(false);
  });
  it("keeps one entry per XID with an action for each", () => {
    expect(new Set(XID_POLICY.map((r) => r.xid)).size).toBe(XID_POLICY.length);
    for (const r of XID_POLICY) expect(r.action.length).toBeGreaterThan(5);
    expect(FATAL_XIDS).toEqual(XID_POLICY.filter((r) => r.severity === "fatal").map((r) => r.xid));
  });
  it("finds the first fatal XID in a report", () => {
    expect(firstFatalXid([13, 31, 79, 48])).toBe(79);
    expect(firstFatalXid([13, 94])).toBeUndefined();
    expect(firstFatalXid(undefined)).toBeUndefined();
  });
});

describe("health score", () => {
  it("is 100 for a cool GPU with no errors", () => {
    expect(gpuHealth({ status: "available", temperatureC: 55 })).toEqual({ score: 100, reasons: [] });
  });
  it("drops linearly between the warning and critical temperature, then stays at 40", () => {
    expect(gpuHealth({ status: "available", temperatureC: 80 }).score).toBe(100);
    expect(gpuHealth({ status: "available", temperatureC: 85 }).score).toBe(70);
    expect(gpuHealth({ status: "available", temperatureC: 90 }).score).toBe(40);
    expect(gpuHealth({ status: "available", temperatureC: 99 }).score).toBe(40);
    expect(gpuHealth({ status: "available", temperatureC: 85 }, { warningC: 70, criticalC: 80 }).score).toBe(40);
  });
  it("is 0 with a fatal XID, an uncorrectable ECC error, a failed remap, or a missing GPU", () => {
    expect(gpuHealth({ status: "available", recentXids: [79] })).toMatchObject({ score: 0, reasons: [expect.stringContaining("79")] });
    expect(gpuHealth({ status: "available", eccUncorrected: 2 }).score).toBe(0);
    expect(gpuHealth({ status: "available", remapFailure: true }).score).toBe(0);
    expect(gpuHealth({ status: "missing" }).score).toBe(0);
  });
  it("costs 5 per application XID (at most 20) and nothing for informational ones", () => {
    expect(gpuHealth({ status: "available", recentXids: [13] }).score).toBe(95);
    expect(gpuHealth({ status: "available", recentXids: [13, 31, 43, 45, 68, 13] }).score).toBe(80);
    expect(gpuHealth({ status: "available", recentXids: [63, 92, 94] }).score).toBe(100);
  });
  it("scores a node by its worst GPU and its heartbeat freshness", () => {
    const gpus = [gpuHealth({ status: "available", temperatureC: 50 }), gpuHealth({ status: "available", temperatureC: 85 })];
    expect(nodeHealth({ status: "available", heartbeatAgeS: 5, heartbeatIntervalS: 15, gpus }).score).toBe(70);
    expect(nodeHealth({ status: "available", heartbeatAgeS: 45, heartbeatIntervalS: 15, gpus }).score).toBe(40);
    expect(nodeHealth({ status: "offline", heartbeatAgeS: 500, heartbeatIntervalS: 15, gpus }).score).toBe(0);
    expect(nodeHealth({ status: "registered", heartbeatAgeS: null, heartbeatIntervalS: 15, gpus: [] }).score).toBe(50);
  });
});
