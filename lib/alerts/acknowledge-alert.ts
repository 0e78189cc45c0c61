import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { alertInclude } from "./alert-json";

/** An operator takes an alert: the plane shows who is on it. Acknowledging twice keeps the first. */
export async function acknowledgeAlert(actor: Actor, id: string) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      Array<{ id: string; acknowledged_at: Date | null }>
    >`SELECT id, acknowledged_at FROM alert_events WHERE id = ${id}::uuid FOR UPDATE`;
    if (!rows[0]) throw notFound("Alert");
    if (!rows[0].acknowledged_at) {
      await tx.alertEvent.update({ where: { id }, data: { acknowledgedAt: new Date(), acknowledgedBy: actor.principal.label } });
      await recordAudit(tx, actor, { action: "alert.acknowledged", targetType: "alert", targetId: id });
    }
    return tx.alertEvent.findUniqueOrThrow({ where: { id }, include: alertInclude });
  });
}
