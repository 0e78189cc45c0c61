import "server-only";
import { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import type { Prisma } from "@/lib/generated/prisma/client";
import { toCsv } from "@/lib/http/csv";
import { contains, dayRange, EXPORT_LIMIT, listParamsShape, pageWindow } from "@/lib/http/list-params";
import { isUuid } from "@/lib/ids";
import { resolveActors } from "./actor-names";

/**
 * The audit log as people read it: who by name (a user, a key), what happened to which object
 * (named, and linked by the page), filtered, paged and exported.
 */

export const AUDIT_ACTOR_KINDS = ["operator", "tenant", "agent", "system"] as const;

export const auditListParams = z.object({
  ...listParamsShape,
  action: z.string().max(100).optional(),
  actor_kind: z.enum(AUDIT_ACTOR_KINDS).optional(),
  target_type: z.string().max(40).optional(),
  tenant_id: z.uuid().optional(),
  sort: z.enum(["newest", "oldest"]).default("newest"),
});
export type AuditListParams = z.output<typeof auditListParams>;

function where(p: Principal, q: AuditListParams): Prisma.AuditLogWhereInput {
  const scope = tenantScope(p);
  const tenantId = scope.tenantId ?? q.tenant_id;
  const days = dayRange(q.from, q.to);
  return {
    ...(tenantId ? { tenantId } : {}),
    ...(q.action ? { action: { startsWith: q.action } } : {}),
    ...(q.actor_kind ? { actorKind: q.actor_kind } : {}),
    ...(q.target_type ? { targetType: q.target_type } : {}),
    ...(q.q
      ? {
          OR: [
            { action: contains(q.q) },
            { targetId: contains(q.q) },
            { details: { path: ["by"], string_contains: q.q } },
            { details: { path: ["name"], string_contains: q.q } },
          ],
        }
      : {}),
    ...(days ? { createdAt: days } : {}),
  };
}

/** Names of the objects entries point at, by type and id (those that still exist). */
async function targetNames(entries: Array<{ targetType: string; targetId: string | null }>) {
  const ids = (type: string) => [
    ...new Set(entries.filter((e) => e.targetType === type && e.targetId && isUuid(e.targetId)).map((e) => e.targetId!)),
  ];
  const [tenants, nodes, clusters, jobs, endpoints, users, keys, rules] = await Promise.all([
    db().tenant.findMany({ where: { id: { in: ids("tenant") } }, select: { id: true, name: true } }),
    db().node.findMany({ where: { id: { in: ids("node") } }, select: { id: true, hostname: true } }),
    db().cluster.findMany({ where: { id: { in: ids("cluster") } }, select: { id: true, name: true } }),
    db().job.findMany({ where: { id: { in: ids("job") } }, select: { id: true, name: true } }),
    db().endpoint.findMany({ where: { id: { in: ids("endpoint") } }, select: { id: true, name: true } }),
    db().user.findMany({ where: { id: { in: ids("user") } }, select: { id: true, name: true } }),
    db().apiKey.findMany({ where: { id: { in: ids("api_key") } }, select: { id: true, name: true } }),
    db().alertRule.findMany({ where: { id: { in: ids("alert_rule") } }, select: { id: true, name: true } }),
  ]);
  return new Map<string, string>([
    ...tenants.map((t): [string, string] => [t.id, t.name]),
    ...nodes.map((n): [string, string] => [n.id, n.hostname]),
    ...clusters.map((c): [string, string] => [c.id, c.name]),
    ...jobs.map((j): [string, string] => [j.id, j.name]),
    ...endpoints.map((e): [string, string] => [e.id, e.name]),
    ...users.map((u): [string, string] => [u.id, u.name]),
    ...keys.map((k): [string, string] => [k.id, k.name]),
    ...rules.map((r): [string, string] => [r.id, r.name]),
  ]);
}

/** Entries with their actor's and target's names resolved. */
export async function describeEntries<
  E extends { actorKind: string; actorId: string | null; targetType: string; targetId: string | null; details: unknown },
>(entries: E[]) {
  const [actors, targets] = await Promise.all([resolveActors({ ids: entries.map((e) => e.actorId) }), targetNames(entries)]);
  return entries.map((e) => {
    const details = (e.details ?? {}) as Record<string, unknown>;
    const actor = e.actorId ? actors.byId.get(e.actorId) : undefined;
    const by = typeof details.by === "string" ? details.by : undefined;
    const platform = by && by !== "system" ? `the platform (${by})` : "the platform";
    return {
      ...e,
      actorName: actor?.name ?? (e.actorKind === "system" ? platform : (by ?? e.actorKind)),
      actorDetail: actor?.detail ?? null,
      targetName: (e.targetId ? targets.get(e.targetId) : undefined) ?? (typeof details.name === "string" ? details.name : null),
    };
  });
}

export async function listAuditPage(p: Principal, q: AuditListParams) {
  const w = where(p, q);
  const [rows, total] = await Promise.all([
    db().auditLog.findMany({ where: w, orderBy: { id: q.sort === "oldest" ? "asc" : "desc" }, ...pageWindow(q) }),
    db().auditLog.count({ where: w }),
  ]);
  return { rows: await describeEntries(rows), total };
}

export async function auditCsv(p: Principal, q: AuditListParams): Promise<string> {
  const rows = await describeEntries(
    await db().auditLog.findMany({ where: where(p, q), orderBy: { id: q.sort === "oldest" ? "asc" : "desc" }, take: EXPORT_LIMIT }),
  );
  return toCsv(
    [
      "id",
      "created_at",
      "action",
      "actor_kind",
      "actor",
      "actor_detail",
      "target_type",
      "target_id",
      "target",
      "tenant_id",
      "request_id",
      "details",
    ],
    rows.map((r) => [
      String(r.id),
      r.createdAt.toISOString(),
      r.action,
      r.actorKind,
      r.actorName,
      r.actorDetail ?? "",
      r.targetType,
      r.targetId ?? "",
      r.targetName ?? "",
      r.tenantId ?? "",
      r.requestId ?? "",
      JSON.stringify(r.details),
    ]),
  );
}
