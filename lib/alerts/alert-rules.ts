import "server-only";
import type { z } from "zod";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, type Tx } from "@/lib/db/client";
import { notFound, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import { RULE_TYPE_SPECS, ruleKnobIssues, type RuleType, SEVERITIES } from "./rule-types";
import type { CreateRuleInput, ruleJsonSchema, UpdateRuleInput } from "./schemas";

const ruleSelect = {
  id: true,
  name: true,
  ruleType: true,
  clusterId: true,
  threshold: true,
  windowS: true,
  occurrences: true,
  severity: true,
  enabled: true,
  notify: true,
  autoRemediate: true,
  createdAt: true,
  updatedAt: true,
} as const;

async function assertKnobsAndCluster(
  tx: Tx,
  r: { rule_type: RuleType; threshold: number; window_s: number; occurrences: number; auto_remediate: boolean; cluster_id: string | null },
) {
  const issues = ruleKnobIssues(r);
  if (r.cluster_id && !(await tx.cluster.findUnique({ where: { id: r.cluster_id }, select: { id: true } }))) {
    issues.push({ path: "cluster_id", message: "No such cluster" });
  }
  if (issues.length) throw validationFailed(issues);
}

const conflictOnName = (e: unknown) => uniqueViolationToConflict(e, "name", "An alert rule with this name already exists");

/** Operators add rules; omitted knobs take the type's defaults, and every knob is checked against its type. */
export async function createAlertRule(actor: Actor, input: CreateRuleInput) {
  assertOperator(actor.principal);
  const d = RULE_TYPE_SPECS[input.rule_type].defaults;
  const rule = {
    ...input,
    cluster_id: input.cluster_id ?? null,
    threshold: input.threshold ?? d.threshold,
    window_s: input.window_s ?? d.window_s,
    occurrences: input.occurrences ?? d.occurrences,
  };
  try {
    const created = await db().$transaction(async (tx) => {
      await assertKnobsAndCluster(tx, rule);
      const row = await tx.alertRule.create({
        data: {
          name: rule.name,
          ruleType: rule.rule_type,
          clusterId: rule.cluster_id,
          threshold: rule.threshold,
          windowS: rule.window_s,
          occurrences: rule.occurrences,
          severity: rule.severity,
          enabled: rule.enabled,
          notify: rule.notify,
          autoRemediate: rule.auto_remediate,
        },
        select: ruleSelect,
      });
      await recordAudit(tx, actor, { action: "alert_rule.created", targetType: "alert_rule", targetId: row.id, details: { ...rule } });
      return row;
    });
    await emitEvent("alerts/evaluate.requested", { reason: "rule created" });
    return getAlertRuleOrThrow(created.id);
  } catch (e) {
    return conflictOnName(e);
  }
}

/** Operators tune, enable or disable a rule; the merged rule is checked as a whole. Disabling resolves its events at the next evaluation. */
export async function updateAlertRule(actor: Actor, id: string, input: UpdateRuleInput) {
  assertOperator(actor.principal);
  try {
    const updated = await db().$transaction(async (tx) => {
      const before = await tx.alertRule.findUnique({ where: { id }, select: ruleSelect });
      if (!before) throw notFound("Alert rule");
      const merged = {
        rule_type: before.ruleType as RuleType,
        cluster_id: input.cluster_id === undefined ? before.clusterId : input.cluster_id,
        threshold: input.threshold ?? before.threshold,
        window_s: input.window_s ?? before.windowS,
        occurrences: input.occurrences ?? before.occurrences,
        auto_remediate: input.auto_remediate ?? before.autoRemediate,
      };
      await assertKnobsAndCluster(tx, merged);
      const row = await tx.alertRule.update({
        where: { id },
        data: {
          name: input.name,
          clusterId: merged.cluster_id,
          threshold: merged.threshold,
          windowS: merged.window_s,
          occurrences: merged.occurrences,
          severity: input.severity,
          enabled: input.enabled,
          notify: input.notify,
          autoRemediate: merged.auto_remediate,
        },
        select: ruleSelect,
      });
      await recordAudit(tx, actor, {
        action: "alert_rule.updated",
        targetType: "alert_rule",
        targetId: id,
        details: { changes: { ...input }, before: { ...before, createdAt: undefined, updatedAt: undefined } },
      });
      return row;
    });
    await emitEvent("alerts/evaluate.requested", { reason: "rule changed" });
    return getAlertRuleOrThrow(updated.id);
  } catch (e) {
    return conflictOnName(e);
  }
}

export async function listAlertRules() {
  const [rules, firing] = await Promise.all([
    db().alertRule.findMany({ orderBy: [{ ruleType: "asc" }, { name: "asc" }], select: ruleSelect }),
    db().alertEvent.groupBy({ by: ["ruleId"], where: { status: "firing", ruleId: { not: null } }, _count: { _all: true } }),
  ]);
  const counts = new Map(firing.map((f) => [f.ruleId, f._count._all]));
  return rules.map((r) => ({ ...r, firing: counts.get(r.id) ?? 0 }));
}

export async function getAlertRuleOrThrow(id: string) {
  const rule = await db().alertRule.findUnique({ where: { id }, select: ruleSelect });
  if (!rule) throw notFound("Alert rule");
  const firing = await db().alertEvent.count({ where: { ruleId: id, status: "firing" } });
  return { ...rule, firing };
}

export type AlertRuleRow = Awaited<ReturnType<typeof getAlertRuleOrThrow>>;

export function ruleJson(r: AlertRuleRow): z.input<typeof ruleJsonSchema> {
  return {
    id: r.id,
    name: r.name,
    rule_type: r.ruleType as RuleType,
    cluster_id: r.clusterId,
    threshold: r.threshold,
    window_s: r.windowS,
    occurrences: r.occurrences,
    severity: oneOf(SEVERITIES, r.severity, "alert_rules.severity"),
    enabled: r.enabled,
    notify: r.notify,
    auto_remediate: r.autoRemediate,
    firing: r.firing,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}
