import "server-only";
import { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { idCursor } from "@/lib/http/pagination";

export const listAuditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: idCursor().optional(),
  tenant_id: z.uuid().optional(),
  action: z.string().max(100).optional(),
});

export const auditEntryJsonSchema = z
  .object({
    id: z.string(),
    actor_kind: z.string(),
    actor_id: z.string().nullable(),
    tenant_id: z.string().nullable(),
    action: z.string(),
    target_type: z.string(),
    target_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    request_id: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "AuditEntry" });

/** Newest first; the cursor is the last id seen (ids only grow). Tenant admins see their tenant's entries. */
export async function listAuditLog(principal: Principal, opts: z.output<typeof listAuditQuery>) {
  const scope = tenantScope(principal);
  const before = opts.cursor ? BigInt(opts.cursor) : undefined;
  const tenantId = scope.tenantId ?? opts.tenant_id;
  const rows = await db().auditLog.findMany({
    where: {
      ...(tenantId ? { tenantId } : {}),
      ...(opts.action ? { action: { startsWith: opts.action } } : {}),
      ...(before ? { id: { lt: before } } : {}),
    },
    orderBy: { id: "desc" },
    take: opts.limit + 1,
  });
  const data = rows.slice(0, opts.limit).map((r) => ({
    id: r.id.toString(),
    actor_kind: r.actorKind,
    actor_id: r.actorId,
    tenant_id: r.tenantId,
    action: r.action,
    target_type: r.targetType,
    target_id: r.targetId,
    details: r.details as Record<string, unknown>,
    request_id: r.requestId,
    created_at: r.createdAt.toISOString(),
  }));
  return { data, next_cursor: rows.length > opts.limit ? (data[data.length - 1]?.id ?? null) : null };
}
