import "server-only";
import type { Actor } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";
import type { Prisma } from "@/lib/generated/prisma/client";

export interface AuditEntry {
  action: string;
  targetType: string;
  targetId?: string | null;
  tenantId?: string | null;
  details?: Prisma.InputJsonValue;
}

/** The audit row an actor's entry makes (pure): who, for which tenant, what, with `by` beside the details. */
export function auditRow(actor: Actor, entry: AuditEntry) {
  const p = actor.principal;
  return {
    actorKind: p.kind === "operator" && p.system ? "system" : p.kind,
    actorId: ("userId" in p && p.userId) || p.keyId || null,
    tenantId: entry.tenantId ?? (p.kind === "tenant" ? p.tenantId : null),
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId ?? null,
    details: { by: p.label, ...detailsObject(entry.details) },
    requestId: actor.requestId ?? null,
  };
}

/** Appends an audit entry inside the caller's transaction, so the record and the change commit together. */
export async function recordAudit(tx: Tx, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.auditLog.create({ data: auditRow(actor, entry) });
}

/** The entry's details as fields to store beside `by`: an object's own fields, nothing for any other JSON value. */
function detailsObject(details: Prisma.InputJsonValue | undefined): Prisma.InputJsonObject {
  return typeof details === "object" && details !== null && !Array.isArray(details) ? (details as Prisma.InputJsonObject) : {};
}
