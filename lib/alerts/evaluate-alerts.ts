import "server-only";
import { pool } from "@/lib/db/client";
import { dedupeKey, evaluateRule, type RuleForEvaluation, type Violation } from "./evaluate-rule";
import { enqueueNotifications } from "./notification-outbox";
import { remediateNodes, type NodeFault, type RemediationOutcome } from "./remediate-nodes";
import { gatherRuleFacts } from "./rule-facts";

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
  const { rows } = await pool().query<{ id: string; dedupe_key: string; inserted: boolean }>(
    `INSERT INTO alert_events (rule_id, rule_type, severity, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, message, details)
     SELECT $1, $2, $3, x.* FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::uuid[], $10::uuid[], $11::text[], $12::jsonb[])
       AS x(dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, message, details)
     ON CONFLICT (dedupe_key) WHERE status = 'firing'
     DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message, details = EXCLUDED.details, severity = EXCLUDED.severity
     RETURNING id, dedupe_key, (xmax = 0) AS inserted`,
    [
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
    ],
  );
  return rows;
}

/** Resolves the rule's firing events whose subjects no longer violate it. */
async function resolveCleared(ruleId: string, stillFiring: string[]) {
  const { rows } = await pool().query<{ id: string }>(
    `UPDATE alert_events SET status = 'resolved', resolved_at = now()
      WHERE rule_id = $1 AND status = 'firing' AND NOT (dedupe_key = ANY($2::text[])) RETURNING id`,
    [ruleId, stillFiring],
  );
  return rows.map((r) => r.id);
}

/** Platform events without a rule: a moved job resolves when it runs again (or ends), an interrupted pod likewise; a capped remediation once a human acted. */
async function resolveSystemEvents(): Promise<string[]> {
  const { rows } = await pool().query<{ id: string; rule_type: string }>(
    `UPDATE alert_events e SET status = 'resolved', resolved_at = now()
      WHERE e.status = 'firing' AND (
        (e.rule_type = 'job_moved' AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id::text = e.subject_id AND j.status IN ('queued', 'blocked')))
        -- an interrupted pod: once it runs again or is stopped or terminated (a tenant's action resolves it at once)
        OR (e.rule_type = 'pod_interrupted' AND NOT EXISTS (SELECT 1 FROM pods p WHERE p.id::text = e.subject_id AND p.status IN ('failed', 'pending', 'starting')))
        OR (e.rule_type = 'remediation_capped' AND (
              NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id AND n.status NOT IN ('quarantined', 'maintenance')
                                                     AND n.status_before_offline IS DISTINCT FROM 'quarantined' AND n.status_before_offline IS DISTINCT FROM 'maintenance')
              OR NOT EXISTS (SELECT 1 FROM alert_events f JOIN alert_rules r ON r.id = f.rule_id
                              WHERE f.status = 'firing' AND f.node_id = e.node_id AND r.auto_remediate))))
      RETURNING e.id, e.rule_type`,
  );
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
export async function evaluateAlerts(opts: { remediation?: { cap?: number; windowS?: number }; ruleIds?: string[] } = {}): Promise<EvaluationSummary> {
  const started = performance.now();
  const only = opts.ruleIds ?? null;
  const { rows: rules } = await pool().query<RuleRow & { threshold: number }>(
    `SELECT id, name, rule_type, cluster_id, threshold, window_s, occurrences, severity, enabled, notify, auto_remediate
       FROM alert_rules WHERE enabled AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))
      ORDER BY CASE rule_type WHEN 'gpu_xid' THEN 0 WHEN 'gpu_temperature' THEN 1 ELSE 2 END, created_at`,
    [only],
  );
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
    const cleared = await resolveCleared(rule.id, events.map((e) => e.dedupe_key));
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
  if (!only) await pool().query(`UPDATE alert_events e SET status = 'resolved', resolved_at = now() FROM alert_rules r WHERE r.id = e.rule_id AND NOT r.enabled AND e.status = 'firing'`);

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
