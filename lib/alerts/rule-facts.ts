import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { slaFacts } from "@/lib/endpoints/endpoint-sla";
import { computeSla } from "@/lib/endpoints/sla";
import type { RuleFacts, RuleForEvaluation, SlaFacts } from "./evaluate-rule";
import { IDLE_UTILIZATION_PCT } from "./rule-types";
import { IDLE_ALLOCATION_FACTS, IDLE_GPU_FACTS, SLA_ENDPOINTS, TEMPERATURE_FACTS, UNREACHABLE_FACTS, XID_FACTS } from "./statements";

/** Endpoints serving (not provisioning or stopped) with SLA targets, their SLA over the rule's window. */
async function slaBreachFacts(clusterId: string | null, windowS: number): Promise<SlaFacts[]> {
  const rows = await run(pool(), SLA_ENDPOINTS, [clusterId]);
  if (rows.length === 0) return [];
  const now = Date.now();
  const from = new Date(now - windowS * 1000);
  const facts = await slaFacts(
    rows.map((r) => r.id),
    from,
    new Date(now),
  );
  return rows.map((e) => {
    const sla = computeSla({
      from: from.getTime(),
      to: now,
      now,
      ...facts.get(e.id)!,
      targets: { p95Ms: e.sla_p95_ms, availabilityPct: e.sla_availability_pct },
    });
    return {
      endpoint_id: e.id,
      endpoint_name: e.name,
      tenant_id: e.tenant_id,
      cluster_id: e.cluster_id,
      status: e.status,
      minutes_expected: sla.minutes_expected,
      minutes_down: sla.minutes_down,
      minutes_no_data: sla.minutes_no_data,
      availability_pct: sla.availability_pct,
      availability_target: e.sla_availability_pct,
      p95_compliance_pct: sla.p95_compliance_pct,
      p95_target_ms: e.sla_p95_ms,
      p95_worst_ms: sla.p95_worst_ms,
      error_budget_remaining_pct: sla.error_budget?.remaining_pct ?? null,
    };
  });
}

export async function gatherRuleFacts(rule: RuleForEvaluation & { cluster_id: string | null }): Promise<RuleFacts> {
  const c = rule.cluster_id;
  switch (rule.rule_type) {
    case "idle_gpu":
      return {
        rule_type: "idle_gpu",
        rows: await run(pool(), IDLE_GPU_FACTS, [
          c,
          rule.window_s,
          IDLE_UTILIZATION_PCT,
          Math.max(1, Math.floor((rule.window_s / 60) * 0.8)),
        ]),
      };
    case "idle_allocation":
      return { rule_type: "idle_allocation", rows: await run(pool(), IDLE_ALLOCATION_FACTS, [c, rule.window_s]) };
    case "gpu_temperature":
      return { rule_type: "gpu_temperature", rows: await run(pool(), TEMPERATURE_FACTS, [c, rule.window_s, rule.threshold]) };
    case "node_unreachable":
      return {
        rule_type: "node_unreachable",
        rows: (await run(pool(), UNREACHABLE_FACTS, [c, rule.window_s])).map((r) => ({
          ...r,
          last_heartbeat_at: r.last_heartbeat_at?.toISOString() ?? null,
        })),
      };
    case "gpu_xid":
      return {
        rule_type: "gpu_xid",
        rows: (await run(pool(), XID_FACTS, [c])).map((r) => ({ ...r, last_xid_at: r.last_xid_at?.toISOString() ?? null })),
      };
    case "sla_breach":
      return { rule_type: "sla_breach", rows: await slaBreachFacts(rule.cluster_id, rule.window_s) };
  }
}
