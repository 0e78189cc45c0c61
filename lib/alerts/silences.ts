import "server-only";
import { z } from "zod";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { invalidTransition, notFound, validationFailed } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { silenceFor, type Silence, type SilenceableAlert } from "./silence-match";
import { ALERT_EVENT_TYPES, SILENCE_KINDS } from "./rule-types";

export const createSilenceBody = z
  .strictObject({
    kind: z.enum(SILENCE_KINDS).default("silence"),
    rule_id: z.uuid().optional(),
    rule_type: z.enum(ALERT_EVENT_TYPES).optional(),
    cluster_id: z.uuid().optional(),
    node_id: z.uuid().optional(),
    subject_type: z.string().max(40).optional(),
    subject_id: z.string().max(200).optional(),
    reason: z.string().trim().min(3, "Say why, in a few words").max(500),
    starts_at: z.iso.datetime({ offset: true, error: "A date and time" }).optional(),
    ends_at: z.iso.datetime({ offset: true, error: "A date and time" }).optional(),
    duration_s: z
      .number()
      .int()
      .min(60, "At least a minute")
      .max(90 * 86_400, "At most 90 days")
      .optional(),
  })
  .refine((b) => b.ends_at || b.duration_s, { path: ["duration_s"], message: "How long: a duration or an end" })
  .refine((b) => b.rule_id || b.rule_type || b.cluster_id || b.node_id || b.subject_id, {
    path: ["rule_id"],
    message: "Choose what to silence: a rule, a type, a cluster, a node or one alert's subject",
  })
  .refine((b) => b.kind !== "maintenance" || b.cluster_id || b.node_id, {
    path: ["cluster_id"],
    message: "A maintenance window is for a cluster or a node",
  });
type CreateSilenceInput = z.output<typeof createSilenceBody>;

/** Starts a silence now, or schedules a maintenance window; audited. */
export async function createSilence(actor: Actor, body: z.input<typeof createSilenceBody>, now = new Date()) {
  assertOperator(actor.principal);
  // the same rules whoever calls (the console's action, a script): a bounded, scoped silence with a reason
  const parsed = createSilenceBody.safeParse(body);
  if (!parsed.success) throw validationFailed(zodIssuesToDetails(parsed.error.issues, "body"));
  const input: CreateSilenceInput = parsed.data;
  const startsAt = input.starts_at ? new Date(input.starts_at) : now;
  const endsAt = input.ends_at ? new Date(input.ends_at) : new Date(startsAt.getTime() + input.duration_s! * 1000);
  if (endsAt <= startsAt) throw validationFailed([{ path: "ends_at", message: "Must be after the start" }]);
  if (endsAt <= now) throw validationFailed([{ path: "ends_at", message: "Must be in the future" }]);
  return db().$transaction(async (tx) => {
    const s = await tx.alertSilence.create({
      data: {
        kind: input.kind,
        ruleId: input.rule_id ?? null,
        ruleType: input.rule_type ?? null,
        clusterId: input.cluster_id ?? null,
        nodeId: input.node_id ?? null,
        subjectType: input.subject_id ? (input.subject_type ?? null) : null,
        subjectId: input.subject_id ?? null,
        reason: input.reason,
        startsAt,
        endsAt,
        createdBy: actor.principal.label,
      },
    });
    await recordAudit(tx, actor, {
      action: `alert.${input.kind}_created`,
      targetType: "alert_silence",
      targetId: s.id,
      details: {
        reason: input.reason,
        starts_at: startsAt.toISOString(),
        ends_at: endsAt.toISOString(),
        rule_id: s.ruleId,
        rule_type: s.ruleType,
        cluster_id: s.clusterId,
        node_id: s.nodeId,
        subject: s.subjectId,
      },
    });
    return s;
  });
}

/** Ends a silence or window before it expires (or cancels one that has not started). */
export async function endSilence(actor: Actor, id: string, now = new Date()) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const s = await tx.alertSilence.findUnique({ where: { id } });
    if (!s) throw notFound("Silence");
    if (s.endedAt || s.endsAt <= now) throw invalidTransition("It has already ended");
    const ended = await tx.alertSilence.update({ where: { id }, data: { endedAt: now, endedBy: actor.principal.label } });
    await recordAudit(tx, actor, {
      action: `alert.${s.kind}_ended`,
      targetType: "alert_silence",
      targetId: id,
      details: { reason: s.reason, planned_end: s.endsAt.toISOString() },
    });
    return ended;
  });
}

/** Silences that can still matter: active or upcoming now (and, for the list, the recently finished). */
export async function listSilences(opts: { includeFinishedDays?: number } = {}, now = new Date()) {
  const since = new Date(now.getTime() - (opts.includeFinishedDays ?? 0) * 86_400_000);
  return db().alertSilence.findMany({
    where: { endsAt: { gt: since }, ...(opts.includeFinishedDays ? {} : { OR: [{ endedAt: null }, { endedAt: { gt: now } }] }) },
    orderBy: [{ startsAt: "desc" }],
    take: 500,
    include: { rule: { select: { name: true } }, cluster: { select: { name: true } }, node: { select: { hostname: true } } },
  });
}

/** The alerts among `alerts` that an active silence keeps quiet, with the silence. */
export async function silencedAmong<A extends SilenceableAlert & { id: string }>(
  alerts: A[],
  now = new Date(),
): Promise<Map<string, Silence & { reason: string }>> {
  if (alerts.length === 0) return new Map();
  const active = await db().alertSilence.findMany({ where: { startsAt: { lte: now }, endsAt: { gt: now }, endedAt: null } });
  const out = new Map<string, Silence & { reason: string }>();
  if (active.length === 0) return out;
  for (const a of alerts) {
    const s = silenceFor(a, active, now);
    if (s) out.set(a.id, s);
  }
  return out;
}
