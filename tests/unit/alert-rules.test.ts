import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deliveryBackoffSeconds, MAX_DELIVERY_ATTEMPTS, notificationText } from "@/lib/alerts/delivery-policy";
import { dedupeKey, evaluateRule, type RuleForEvaluation } from "@/lib/alerts/evaluate-rule";
import { decideRemediations } from "@/lib/alerts/remediation-cap";
import { RULE_TYPE_SPECS, RULE_TYPES, ruleKnobIssues, type RuleType } from "@/lib/alerts/rule-types";

const rule = (rule_type: RuleType, over: Partial<RuleForEvaluation> = {}): RuleForEvaluation => ({
  id: "r1",
  name: "rule",
  rule_type,
  severity: "warning",
  ...RULE_TYPE_SPECS[rule_type].defaults,
  ...over,
});

describe("idle_gpu", () => {
  const facts = (gpus_in_service: number, gpus_idle: number) => ({
    rule_type: "idle_gpu" as const,
    rows: [{ cluster_id: "c1", cluster_name: "east", gpus_in_service, gpus_idle }],
  });
  it("fires at the threshold share and not below it", () => {
    expect(evaluateRule(rule("idle_gpu", { threshold: 40 }), facts(10, 4))).toHaveLength(1);
    expect(evaluateRule(rule("idle_gpu", { threshold: 40 }), facts(10, 3))).toHaveLength(0);
  });
  it("names the cluster and the figures", () => {
    const [v] = evaluateRule(rule("idle_gpu", { threshold: 40 }), facts(8, 8));
    expect(v).toMatchObject({ subject_type: "cluster", subject_id: "c1", cluster_id: "c1", details: { gpus_idle: 8, idle_pct: 100 } });
    expect(v!.message).toContain("8 of 8 GPUs in east idle");
  });
  it("a cluster with no GPU in service never fires (no division by zero)", () => {
    expect(evaluateRule(rule("idle_gpu", { threshold: 1 }), facts(0, 0))).toEqual([]);
  });
});

describe("idle_allocation", () => {
  const job = (over: object) => ({
    rule_type: "idle_allocation" as const,
    rows: [
      {
        job_id: "j1",
        job_name: "train",
        tenant_id: "t1",
        cluster_id: "c1",
        gpus: 4,
        running_s: 3600,
        minutes_observed: 30,
        peak_minute_avg_pct: 3,
        avg_pct: 2,
        ...over,
      },
    ],
  });
  const r = rule("idle_allocation", { threshold: 5, window_s: 1800 });
  it("fires for a job whose every minute stayed under the threshold, and tells its tenant", () => {
    expect(evaluateRule(r, job({}))).toEqual([expect.objectContaining({ subject_type: "job", subject_id: "j1", tenant_id: "t1" })]);
  });
  it("one busy minute is enough to stay quiet", () => {
    expect(evaluateRule(r, job({ peak_minute_avg_pct: 5 }))).toEqual([]);
  });
  it("needs the job to have run the whole window", () => {
    expect(evaluateRule(r, job({ running_s: 1799 }))).toEqual([]);
  });
  it("a reporting gap is not proof of idleness", () => {
    expect(evaluateRule(r, job({ minutes_observed: 10 }))).toEqual([]);
    expect(evaluateRule(r, job({ minutes_observed: 0, peak_minute_avg_pct: null, avg_pct: null }))).toEqual([]);
    expect(evaluateRule(r, job({ minutes_observed: 24 }))).toHaveLength(1);
  });
});

describe("gpu_temperature", () => {
  const gpu = (hot_minutes: number) => ({
    rule_type: "gpu_temperature" as const,
    rows: [{ gpu_id: "g1", gpu_index: 3, node_id: "n1", hostname: "node-a", cluster_id: "c1", hot_minutes, peak_c: 97.26 }],
  });
  it("fires when hot in at least `occurrences` minutes: repeated, not one spike", () => {
    const r = rule("gpu_temperature", { threshold: 90, occurrences: 3 });
    expect(evaluateRule(r, gpu(2))).toEqual([]);
    const [v] = evaluateRule(r, gpu(3));
    expect(v).toMatchObject({
      subject_type: "gpu",
      subject_id: "g1",
      node_id: "n1",
      subject_label: "node-a GPU 3",
      details: { hot_minutes: 3, peak_c: 97.3 },
    });
  });
});

describe("node_unreachable", () => {
  const node = (status: string, silent_s: number, before: string | null = null) => ({
    rule_type: "node_unreachable" as const,
    rows: [
      { node_id: "n1", hostname: "node-a", cluster_id: "c1", status, status_before_offline: before, silent_s, last_heartbeat_at: null },
    ],
  });
  const r = rule("node_unreachable", { window_s: 120 });
  it("fires after the window without a heartbeat", () => {
    expect(evaluateRule(r, node("offline", 121, "available"))).toHaveLength(1);
    expect(evaluateRule(r, node("available", 119))).toEqual([]);
  });
  it("nodes in maintenance may be silent", () => {
    expect(evaluateRule(r, node("maintenance", 5000))).toEqual([]);
    expect(evaluateRule(r, node("offline", 5000, "maintenance"))).toEqual([]);
  });
});

describe("gpu_xid", () => {
  const gpu = (reason: string) => ({
    rule_type: "gpu_xid" as const,
    rows: [
      {
        gpu_id: "g1",
        gpu_index: 0,
        gpu_uuid: "GPU-1",
        node_id: "n1",
        hostname: "node-a",
        cluster_id: "c1",
        unhealthy_reason: reason,
        last_xid_at: null,
        allocated_job_id: "j9",
      },
    ],
  });
  it("fires for fatal XIDs of the policy, with NVIDIA's action", () => {
    const [v] = evaluateRule(rule("gpu_xid"), gpu("fatal_xid:79"));
    expect(v).toMatchObject({ node_id: "n1", details: { xid: 79, job_id: "j9" } });
    expect(v!.message).toMatch(/XID 79 \(GPU has fallen off the bus\)/);
  });
  it("ignores other unhealthy reasons and non-fatal codes", () => {
    expect(evaluateRule(rule("gpu_xid"), gpu("ecc_uncorrected"))).toEqual([]);
    expect(evaluateRule(rule("gpu_xid"), gpu("fatal_xid:13"))).toEqual([]);
  });
});

describe("dedupe key", () => {
  it("is one per rule and subject", () => {
    const a = dedupeKey("r1", { subject_type: "gpu", subject_id: "g1" });
    expect(a).toBe(dedupeKey("r1", { subject_type: "gpu", subject_id: "g1" }));
    expect(a).not.toBe(dedupeKey("r2", { subject_type: "gpu", subject_id: "g1" }));
    expect(a).not.toBe(dedupeKey("r1", { subject_type: "node", subject_id: "g1" }));
  });
});

describe("rule knobs", () => {
  it("every type's defaults are valid", () => {
    for (const t of RULE_TYPES)
      expect(ruleKnobIssues({ rule_type: t, ...RULE_TYPE_SPECS[t].defaults, auto_remediate: false }), t).toEqual([]);
  });
  it("names each knob out of range or not used by the type", () => {
    expect(
      ruleKnobIssues({ rule_type: "gpu_temperature", threshold: 200, window_s: 30, occurrences: 0, auto_remediate: true }).map(
        (i) => i.path,
      ),
    ).toEqual(["threshold", "window_s", "occurrences"]);
    expect(ruleKnobIssues({ rule_type: "gpu_xid", threshold: 3, window_s: 0, occurrences: 1, auto_remediate: true })).toEqual([
      { path: "threshold", message: expect.stringContaining("Not used") },
    ]);
    expect(ruleKnobIssues({ rule_type: "gpu_temperature", threshold: 90, window_s: 120, occurrences: 3, auto_remediate: false })).toEqual([
      { path: "occurrences", message: expect.stringContaining("minutes in the window") },
    ]);
  });
  it("only hardware rules may remediate", () => {
    expect(ruleKnobIssues({ rule_type: "idle_gpu", threshold: 40, window_s: 600, occurrences: 1, auto_remediate: true })).toEqual([
      { path: "auto_remediate", message: expect.any(String) },
    ]);
  });
});

describe("remediation cap", () => {
  const c = (node_id: string, cause = "fatal_xid:79") => ({ node_id, cause });
  it("acts until the cap, then hands the rest to a human", () => {
    const d = decideRemediations([c("a"), c("b"), c("c"), c("d")], 3, 5);
    expect(d.quarantine.map((x) => x.node_id)).toEqual(["a", "b"]);
    expect(d.capped.map((x) => x.node_id)).toEqual(["c", "d"]);
    expect(d.used_after).toBe(5);
  });
  it("a node with several faults counts once", () => {
    const d = decideRemediations([c("a"), c("a", "overheating"), c("b")], 0, 5);
    expect(d.quarantine.map((x) => x.node_id)).toEqual(["a", "b"]);
  });
  it("a cap of zero never acts", () => {
    expect(decideRemediations([c("a")], 0, 0)).toMatchObject({ quarantine: [], capped: [c("a")] });
  });
  it("never exceeds the cap, never loses a candidate (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"), { maxLength: 40 }),
        fc.nat(10),
        fc.nat(10),
        (nodes, used, cap) => {
          const d = decideRemediations(
            nodes.map((n) => c(n)),
            used,
            cap,
          );
          const distinct = new Set(nodes).size;
          expect(d.quarantine.length).toBeLessThanOrEqual(Math.max(0, cap - used));
          expect(d.quarantine.length + d.capped.length).toBe(distinct);
          expect(new Set([...d.quarantine, ...d.capped].map((x) => x.node_id)).size).toBe(distinct);
        },
      ),
    );
  });
});

describe("notification delivery policy", () => {
  it("backs off exponentially up to 30 minutes", () => {
    expect([1, 2, 3, 4].map(deliveryBackoffSeconds)).toEqual([10, 20, 40, 80]);
    expect(deliveryBackoffSeconds(20)).toBe(1800);
    const total = Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, (_, i) => deliveryBackoffSeconds(i + 1)).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(3600); // a channel down for an hour loses nothing
  });
  it("says what fired, where, and links to it", () => {
    const t = notificationText({
      status: "firing",
      severity: "critical",
      rule_name: "Fatal XID",
      subject_label: "node-a GPU 0",
      message: "XID 79",
      fired_at: new Date("2026-11-30T01:00:00Z"),
      resolved_at: null,
      link: "http://x/admin/alerts?alert=1",
    });
    expect(t.subject).toBe("[GPUForge] FIRING critical: Fatal XID — node-a GPU 0");
    expect(t.text).toContain("http://x/admin/alerts?alert=1");
    expect(
      notificationText({
        status: "resolved",
        severity: "critical",
        rule_name: "Fatal XID",
        subject_label: "n",
        message: "m",
        fired_at: new Date(0),
        resolved_at: new Date(1000),
        link: "l",
      }).subject,
    ).toMatch(/^\[GPUForge\] RESOLVED/);
  });
});
