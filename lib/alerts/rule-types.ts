// The alert rule catalogue, pure. Each rule has the same four knobs (threshold, window_s,
// occurrences, severity); what they mean depends on its type, documented here once and shown in
// the rules editor and the OpenAPI document.

export const RULE_TYPES = ["idle_gpu", "idle_allocation", "gpu_temperature", "node_unreachable", "gpu_xid", "sla_breach"] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** Events without a rule of ours: the platform's own, and external ones (Alertmanager). */
const SYSTEM_EVENT_TYPES = [
  "remediation_capped",
  "job_moved",
  "unexpected_payment",
  "external",
  "pod_interrupted",
  "reservation_degraded",
  // burst to GPU providers (issue 30): a spend cap reached, an instance nothing owns, an instance that never joined
  "burst_spend_cap",
  "provider_stray_instance",
  "burst_failed",
  "provisioning_failed",
  "handover_failed",
  "attestation_key_mismatch",
  "node_address_changed",
] as const;
export type AlertEventType = RuleType | (typeof SYSTEM_EVENT_TYPES)[number];

export const ALERT_EVENT_TYPES = [...RULE_TYPES, ...SYSTEM_EVENT_TYPES] as const;

export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const ALERT_STATUSES = ["firing", "resolved"] as const;

/** What an alert is about (its subject_type). */
export const ALERT_SUBJECT_TYPES = [
  "pod",
  "reservation",
  "cluster",
  "node",
  "gpu",
  "job",
  "endpoint",
  "invoice",
  "tenant",
  "provider",
  "card_deposit",
] as const;

export const SILENCE_KINDS = ["silence", "maintenance"] as const;
export const REMEDIATION_OUTCOMES = ["quarantined", "capped"] as const;

/** Types whose firing may quarantine a node on its own (the database refuses the flag elsewhere). */
export const REMEDIABLE_TYPES: readonly RuleType[] = ["gpu_xid", "gpu_temperature"];

/** A GPU counts as idle while its utilization stays below this in every minute of the window. */
export const IDLE_UTILIZATION_PCT = 5;

interface Knob {
  min: number;
  max: number;
  meaning: string;
}

export interface RuleTypeSpec {
  label: string;
  subject: "cluster" | "job" | "gpu" | "node" | "endpoint";
  description: string;
  threshold: Knob | null;
  window: Knob | null;
  occurrences: Knob | null;
  defaults: { threshold: number; window_s: number; occurrences: number };
}

export const RULE_TYPE_SPECS: Record<RuleType, RuleTypeSpec> = {
  idle_gpu: {
    label: "Idle capacity",
    subject: "cluster",
    description: `Fires per cluster when the share of in-service GPUs that are unallocated and stayed under ${IDLE_UTILIZATION_PCT} % utilization for the whole window (observed for at least 80 % of it) reaches the threshold.`,
    threshold: { min: 1, max: 100, meaning: "share of idle GPUs, %" },
    window: { min: 60, max: 86_400, meaning: "how long a GPU must have been idle, seconds" },
    occurrences: null,
    defaults: { threshold: 40, window_s: 1800, occurrences: 1 },
  },
  idle_allocation: {
    label: "Allocated but idle",
    subject: "job",
    description:
      "Fires per running job when every minute of the window its GPUs averaged under the threshold utilization: GPUs paid for and not used. The job's tenant sees it too.",
    threshold: { min: 0, max: 100, meaning: "utilization, %" },
    window: { min: 120, max: 86_400, meaning: "seconds the job must have stayed under it" },
    occurrences: null,
    defaults: { threshold: 5, window_s: 1800, occurrences: 1 },
  },
  gpu_temperature: {
    label: "GPU overheating",
    subject: "gpu",
    description:
      "Fires per GPU when its peak temperature reached the threshold in at least `occurrences` minutes of the window (repeated, not a single spike).",
    threshold: { min: 30, max: 130, meaning: "temperature, °C" },
    window: { min: 60, max: 86_400, meaning: "look-back, seconds" },
    occurrences: { min: 1, max: 1440, meaning: "minutes at or above the threshold" },
    defaults: { threshold: 90, window_s: 600, occurrences: 3 },
  },
  node_unreachable: {
    label: "Node unreachable",
    subject: "node",
    description: "Fires per node without a heartbeat for the window. Nodes in maintenance are expected to be silent and do not fire.",
    threshold: null,
    window: { min: 10, max: 604_800, meaning: "seconds without a heartbeat" },
    occurrences: null,
    defaults: { threshold: 0, window_s: 120, occurrences: 1 },
  },
  gpu_xid: {
    label: "Fatal XID",
    subject: "gpu",
    description:
      "Fires per GPU marked unhealthy by a fatal XID of the fleet's XID policy; resolves when an operator returns the node to service after inspection.",
    threshold: null,
    window: null,
    occurrences: null,
    defaults: { threshold: 0, window_s: 0, occurrences: 1 },
  },
  sla_breach: {
    label: "Inference SLA breach",
    subject: "endpoint",
    description:
      "Fires per serving inference endpoint whose availability over the window is below its target, or whose p95 met its latency target in under 95 % of the minutes with traffic (the endpoint's tenant sees it). Resolves when both hold again.",
    threshold: null,
    window: { min: 60, max: 86_400, meaning: "SLA window, seconds" },
    occurrences: null,
    defaults: { threshold: 0, window_s: 900, occurrences: 1 },
  },
};

export interface RuleKnobs {
  rule_type: RuleType;
  threshold: number;
  window_s: number;
  occurrences: number;
  auto_remediate: boolean;
}

/** Checks a rule's knobs against its type; returns issues by field, empty when valid. */
export function ruleKnobIssues(r: RuleKnobs): Array<{ path: string; message: string }> {
  const spec = RULE_TYPE_SPECS[r.rule_type];
  const issues: Array<{ path: string; message: string }> = [];
  const check = (path: "threshold" | "window_s" | "occurrences", knob: Knob | null, value: number, unused: number) => {
    if (!knob) {
      if (value !== unused) issues.push({ path, message: `Not used by ${r.rule_type} rules; leave it out` });
    } else if (value < knob.min || value > knob.max) {
      issues.push({ path, message: `Must be between ${knob.min} and ${knob.max} (${knob.meaning})` });
    }
  };
  check("threshold", spec.threshold, r.threshold, 0);
  check("window_s", spec.window, r.window_s, 0);
  check("occurrences", spec.occurrences, r.occurrences, 1);
  if (spec.occurrences && spec.window && r.occurrences > Math.max(1, Math.floor(r.window_s / 60))) {
    issues.push({ path: "occurrences", message: "Cannot exceed the number of minutes in the window" });
  }
  if (r.auto_remediate && !REMEDIABLE_TYPES.includes(r.rule_type)) {
    issues.push({ path: "auto_remediate", message: `Only ${REMEDIABLE_TYPES.join(" and ")} rules may quarantine nodes on their own` });
  }
  return issues;
}
