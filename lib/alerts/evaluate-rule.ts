// Rule evaluation, pure: facts gathered by one set-based query per rule go in, the subjects that
// violate the rule come out. lib/alerts/evaluate-alerts.ts does the I/O around it.

import { classifyXid } from "@/lib/fleet/xid-policy";
import type { RuleType, Severity } from "./rule-types";

export interface RuleForEvaluation {
  id: string;
  name: string;
  rule_type: RuleType;
  threshold: number;
  window_s: number;
  occurrences: number;
  severity: Severity;
}

export interface Violation {
  subject_type: "cluster" | "node" | "gpu" | "job" | "endpoint";
  subject_id: string;
  subject_label: string;
  cluster_id: string | null;
  node_id: string | null;
  tenant_id: string | null;
  message: string;
  details: Record<string, unknown>;
}

interface IdleGpuFacts {
  cluster_id: string;
  cluster_name: string;
  gpus_in_service: number;
  gpus_idle: number;
}

interface IdleAllocationFacts {
  job_id: string;
  job_name: string;
  tenant_id: string;
  cluster_id: string | null;
  gpus: number;
  running_s: number;
  minutes_observed: number;
  peak_minute_avg_pct: number | null;
  avg_pct: number | null;
}

interface TemperatureFacts {
  gpu_id: string;
  gpu_index: number;
  node_id: string;
  hostname: string;
  cluster_id: string;
  hot_minutes: number;
  peak_c: number;
}

interface UnreachableFacts {
  node_id: string;
  hostname: string;
  cluster_id: string;
  status: string;
  status_before_offline: string | null;
  silent_s: number;
  last_heartbeat_at: string | null;
}

export interface SlaFacts {
  endpoint_id: string;
  endpoint_name: string;
  tenant_id: string;
  cluster_id: string | null;
  status: string;
  minutes_expected: number;
  minutes_down: number;
  minutes_no_data: number;
  availability_pct: number | null;
  availability_target: number | null;
  p95_compliance_pct: number | null;
  p95_target_ms: number | null;
  p95_worst_ms: number | null;
  error_budget_remaining_pct: number | null;
}

interface XidFacts {
  gpu_id: string;
  gpu_index: number;
  gpu_uuid: string;
  node_id: string;
  hostname: string;
  cluster_id: string;
  unhealthy_reason: string;
  last_xid_at: string | null;
  allocated_job_id: string | null;
}

export type RuleFacts =
  | { rule_type: "idle_gpu"; rows: IdleGpuFacts[] }
  | { rule_type: "idle_allocation"; rows: IdleAllocationFacts[] }
  | { rule_type: "gpu_temperature"; rows: TemperatureFacts[] }
  | { rule_type: "node_unreachable"; rows: UnreachableFacts[] }
  | { rule_type: "gpu_xid"; rows: XidFacts[] }
  | { rule_type: "sla_breach"; rows: SlaFacts[] };

const pct = (n: number) => Math.round(n * 10) / 10;
const gpuLabel = (hostname: string, index: number) => `${hostname} GPU ${index}`;

export function evaluateRule(rule: RuleForEvaluation, facts: RuleFacts): Violation[] {
  switch (facts.rule_type) {
    case "idle_gpu":
      return facts.rows.flatMap((c) => {
        if (c.gpus_in_service === 0) return [];
        const share = (100 * c.gpus_idle) / c.gpus_in_service;
        if (share < rule.threshold) return [];
        return [
          {
            subject_type: "cluster",
            subject_id: c.cluster_id,
            subject_label: c.cluster_name,
            cluster_id: c.cluster_id,
            node_id: null,
            tenant_id: null,
            message: `${c.gpus_idle} of ${c.gpus_in_service} GPUs in ${c.cluster_name} idle (${pct(share)} %, threshold ${rule.threshold} %)`,
            details: {
              gpus_in_service: c.gpus_in_service,
              gpus_idle: c.gpus_idle,
              idle_pct: pct(share),
              threshold_pct: rule.threshold,
              window_s: rule.window_s,
            },
          },
        ];
      });
    case "idle_allocation": {
      // a job needs most of the window observed: a gap in reporting is not proof of idleness
      const needMinutes = Math.max(1, Math.floor((rule.window_s / 60) * 0.8));
      return facts.rows.flatMap((j) => {
        if (j.running_s < rule.window_s || j.minutes_observed < needMinutes || j.peak_minute_avg_pct === null) return [];
        if (j.peak_minute_avg_pct >= rule.threshold) return [];
        return [
          {
            subject_type: "job",
            subject_id: j.job_id,
            subject_label: j.job_name,
            cluster_id: j.cluster_id,
            node_id: null,
            tenant_id: j.tenant_id,
            message: `Job ${j.job_name} holds ${j.gpus} GPU${j.gpus === 1 ? "" : "s"} that stayed under ${rule.threshold} % utilization for ${Math.round(rule.window_s / 60)} min`,
            details: {
              gpus: j.gpus,
              avg_utilization_pct: j.avg_pct === null ? null : pct(j.avg_pct),
              peak_minute_utilization_pct: pct(j.peak_minute_avg_pct),
              minutes_observed: j.minutes_observed,
              threshold_pct: rule.threshold,
              window_s: rule.window_s,
            },
          },
        ];
      });
    }
    case "gpu_temperature":
      return facts.rows.flatMap((g) => {
        if (g.hot_minutes < rule.occurrences) return [];
        return [
          {
            subject_type: "gpu",
            subject_id: g.gpu_id,
            subject_label: gpuLabel(g.hostname, g.gpu_index),
            cluster_id: g.cluster_id,
            node_id: g.node_id,
            tenant_id: null,
            message: `${gpuLabel(g.hostname, g.gpu_index)} reached ${rule.threshold} °C in ${g.hot_minutes} of the last ${Math.round(rule.window_s / 60)} minutes (peak ${pct(g.peak_c)} °C)`,
            details: {
              hot_minutes: g.hot_minutes,
              peak_c: pct(g.peak_c),
              threshold_c: rule.threshold,
              occurrences: rule.occurrences,
              window_s: rule.window_s,
            },
          },
        ];
      });
    case "node_unreachable":
      return facts.rows.flatMap((n) => {
        // a node in maintenance may be powered off on purpose
        if (n.status === "maintenance" || (n.status === "offline" && n.status_before_offline === "maintenance")) return [];
        if (n.silent_s < rule.window_s) return [];
        return [
          {
            subject_type: "node",
            subject_id: n.node_id,
            subject_label: n.hostname,
            cluster_id: n.cluster_id,
            node_id: n.node_id,
            tenant_id: null,
            message: `${n.hostname} has sent no heartbeat for ${Math.round(n.silent_s)} s`,
            details: {
              silent_s: Math.round(n.silent_s),
              last_heartbeat_at: n.last_heartbeat_at,
              status: n.status,
              window_s: rule.window_s,
            },
          },
        ];
      });
    case "gpu_xid":
      return facts.rows.flatMap((g) => {
        const m = /^fatal_xid:(\d+)$/.exec(g.unhealthy_reason);
        if (!m) return [];
        const xid = classifyXid(Number(m[1]));
        if (xid.severity !== "fatal") return [];
        return [
          {
            subject_type: "gpu",
            subject_id: g.gpu_id,
            subject_label: gpuLabel(g.hostname, g.gpu_index),
            cluster_id: g.cluster_id,
            node_id: g.node_id,
            tenant_id: null,
            message: `XID ${xid.xid} (${xid.name}) on ${gpuLabel(g.hostname, g.gpu_index)}: ${xid.action}`,
            details: {
              xid: xid.xid,
              xid_name: xid.name,
              action: xid.action,
              gpu_uuid: g.gpu_uuid,
              reported_at: g.last_xid_at,
              job_id: g.allocated_job_id,
            },
          },
        ];
      });
    case "sla_breach":
      // an SLA needs at least a minute of expected service in the window before it can be missed
      return facts.rows.flatMap((e) => {
        if (e.minutes_expected < 1) return [];
        const missed: string[] = [];
        if (e.availability_target !== null && e.availability_pct !== null && e.availability_pct < e.availability_target) {
          missed.push(
            `availability ${e.availability_pct.toFixed(2)} % < ${e.availability_target} % (${e.minutes_down.toFixed(1)} of ${e.minutes_expected.toFixed(1)} min down)`,
          );
        }
        if (e.p95_target_ms !== null && e.p95_compliance_pct !== null && e.p95_compliance_pct < 95) {
          missed.push(`p95 met the ${e.p95_target_ms} ms target in only ${pct(e.p95_compliance_pct)} % of minutes`);
        }
        if (missed.length === 0) return [];
        return [
          {
            subject_type: "endpoint" as const,
            subject_id: e.endpoint_id,
            subject_label: e.endpoint_name,
            cluster_id: e.cluster_id,
            node_id: null,
            tenant_id: e.tenant_id,
            message: `Endpoint ${e.endpoint_name} missed its SLA over the last ${Math.round(rule.window_s / 60)} min: ${missed.join("; ")}`,
            details: { ...e, window_s: rule.window_s },
          },
        ];
      });
  }
}

/** The key that makes an event unique while it fires: one per rule and subject. */
export function dedupeKey(ruleId: string, v: Pick<Violation, "subject_type" | "subject_id">): string {
  return `${ruleId}:${v.subject_type}:${v.subject_id}`;
}
