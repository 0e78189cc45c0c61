import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { oneOf } from "@/lib/vocabulary";
import { dedupeKey, evaluateRule, type RuleForEvaluation, type Violation } from "./evaluate-rule";
import { enqueueNotifications } from "./notification-outbox";
import { remediateNodes, type NodeFault, type RemediationOutcome } from "./remediate-nodes";
import { gatherRuleFacts } from "./rule-facts";
import { RULE_TYPES, SEVERITIES } from "./rule-types";
import {
  ENABLED_RULES,
  RESOLVE_CLEARED_EVENTS,
  RESOLVE_DISABLED_RULES_EVENTS,
  RESOLVE_SYSTEM_EVENTS,
  UPSERT_FIRING_EVENTS,
} from "./statements";

interface RuleRow extends RuleForEvaluation {
  cluster_id: string | null;
  notify: boolean;
  auto_remediate: boolean;
}

export interface EvaluationSummary {
  rules: number;
  fired: number;
  resolved: number;
  firing: number;
  remediation: Pick<RemediationOutcome, "quarantined" | "capped">;
  duration_ms: number;
}

/** Fires new events and refreshes firing ones in one statement; returns the firing events' ids by dedupe key, and which are new. */
async function upsertFiring(rule: RuleRow, violations: Violation[]) {
  if (violations.length === 0) return [];
  const col = <K extends keyof Violation>(k: K) => violations.map((v) => v[k]);
  return run(pool(), UPSERT_FIRING_EVENTS, [
    rule.id,
    rule.rule_type,
    rule.severity,
    violations.map((v) => dedupeKey(rule.id, v)),
    col("subject_type"),
    col("subject_id"),
    col("subject_label"),
    col("cluster_id"),
    col("node_id"),
    col("tenant_id"),
    col("message"),
    violations.map((v) => JSON.stringify(v.details)),
  ]);
}

/** Resolves the rule's firing events whose subjects no longer violate it. */
async function resolveCleared(ruleId: string, stillFiring: string[]) {
  const rows = await run(pool(), RESOLVE_CLEARED_EVENTS, [ruleId, stillFiring]);
  return rows.map((r) => r.id);
}

/** Platform events without a rule: a moved job resolves when it runs again (or ends), an interrupted pod likewise; a capped remediation once a human acted. */
async function resolveSystemEvents(): Promise<string[]> {
  const rows = await run(pool(), RESOLVE_SYSTEM_EVENTS);
  return rows.filter((r) => r.rule_type === "remediation_capped").map((r) => r.id);
}

function faultOf(rule: RuleRow, v: Violation, eventId: string | null): NodeFault | null {
  if (!v.node_id) return null;
  const cause = rule.rule_type === "gpu_xid" ? `fatal_xid:${String(v.details.xid)}` : "overheating";
  const summary = rule.rule_type === "gpu_xid" ? `XID ${String(v.details.xid)} on ${v.subject_label}` : `${v.subject_label} overheating`;
  return { node_id: v.node_id, cause, summary, alert_event_id: eventId };
}

/**
 * One evaluation of every rule: for each enabled rule, one query gathers its facts, the pure
 * evaluator names the violating subjects, new ones fire and cleared ones resolve (one firing event
 * per rule and subject, kept so by a unique index). Disabled rules' events resolve. Hardware faults
 * of auto-remediating rules go to the remediator; notifications are queued for whatever changed.
 */
/**
 * Evaluates every enabled rule (or only `ruleIds`: then the platform-wide housekeeping — resolving
 * events of disabled rules and of system events — is left to the full pass).
 */
export async function evaluateAlerts(
  opts: { remediation?: { cap?: number; windowS?: number }; ruleIds?: string[] } = {},
): Promise<EvaluationSummary> {
  const started = performance.now();
  const only = opts.ruleIds ?? null;
  const rules = (await run(pool(), ENABLED_RULES, [only])).map((r): RuleRow => ({
    ...r,
    rule_type: oneOf(RULE_TYPES, r.rule_type, "alert_rules.rule_type"),
    severity: oneOf(SEVERITIES, r.severity, "alert_rules.severity"),
  }));
  const fired: string[] = [];
  const resolved: string[] = [];
  const faults: NodeFault[] = [];
  let firing = 0;
  let newlyFired = 0;
  let newlyResolved = 0;
  for (const rule of rules) {
    const violations = evaluateRule(rule, await gatherRuleFacts(rule));
    const events = await upsertFiring(rule, violations);
    const byKey = new Map(events.map((e) => [e.dedupe_key, e]));
    const cleared = await resolveCleared(
      rule.id,
      events.map((e) => e.dedupe_key),
    );
    firing += events.length;
    newlyFired += events.filter((e) => e.inserted).length;
    newlyResolved += cleared.length;
    if (rule.notify) {
      fired.push(...events.filter((e) => e.inserted).map((e) => e.id));
      resolved.push(...cleared);
    }
    if (rule.auto_remediate) {
      for (const v of violations) {
        const f = faultOf(rule, v, byKey.get(dedupeKey(rule.id, v))?.id ?? null);
        if (f) faults.push(f);
      }
    }
  }
  // a disabled rule stops speaking for its subjects
  if (!only) await run(pool(), RESOLVE_DISABLED_RULES_EVENTS);

  const remediation = await remediateNodes(faults, opts.remediation);
  const systemResolved = only ? [] : await resolveSystemEvents();
  resolved.push(...systemResolved);
  await enqueueNotifications(fired, "firing");
  await enqueueNotifications(resolved, "resolved");
  return {
    rules: rules.length,
    fired: newlyFired,
    resolved: newlyResolved + systemResolved.length,
    firing,
    remediation: { quarantined: remediation.quarantined, capped: remediation.capped },
    duration_ms: Math.round(performance.now() - started),
  };
}
