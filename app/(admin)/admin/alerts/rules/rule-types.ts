import type { RuleTypeOption } from "@/components/forms/alert-forms";
import { REMEDIABLE_TYPES, RULE_TYPE_SPECS, RULE_TYPES, type RuleType } from "@/lib/alerts/rule-types";

/** The catalogue as the rules form needs it (plain data, safe to hand to a client component). */
export const ruleTypeOptions: RuleTypeOption[] = RULE_TYPES.map((t) => {
  const s = RULE_TYPE_SPECS[t];
  const knob = (k: { min: number; max: number; meaning: string } | null) => (k ? `${k.meaning} (${k.min}–${k.max})` : null);
  return {
    value: t,
    label: s.label,
    description: s.description,
    threshold: knob(s.threshold),
    window: knob(s.window),
    occurrences: knob(s.occurrences),
    remediable: REMEDIABLE_TYPES.includes(t),
    defaults: s.defaults,
  };
});

/** The knobs a rule uses, as one line: "≥ 90 °C in 3 of 10 min". */
export function describeKnobs(r: { ruleType: string; threshold: number; windowS: number; occurrences: number }): string {
  const min = Math.round(r.windowS / 60);
  switch (r.ruleType as RuleType) {
    case "idle_gpu":
      return `≥ ${r.threshold} % of GPUs idle for ${min} min`;
    case "idle_allocation":
      return `< ${r.threshold} % utilization for ${min} min`;
    case "gpu_temperature":
      return `≥ ${r.threshold} °C in ${r.occurrences} of ${min} min`;
    case "node_unreachable":
      return `no heartbeat for ${r.windowS} s`;
    case "gpu_xid":
      return "any fatal XID of the policy";
    case "sla_breach":
      return `SLA over ${min} min`;
  }
}
