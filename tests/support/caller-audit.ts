import { db } from "@/lib/db/client";

/**
 * Audit entries callers wrote: the server's own background work (handovers, reservation sweeps)
 * audits as the system while a walk runs, so a walk asking "did a refused call write anything?"
 * counts only the others.
 */
export const callerAuditCount = () => db().auditLog.count({ where: { actorKind: { not: "system" } } });
