import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { conflict, notFound } from "@/lib/errors";

/** An operator sends a failed (or waiting) notification again now, with a fresh set of attempts. */
export async function retryNotification(actor: Actor, id: string) {
  assertOperator(actor.principal);
  const n = await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ status: string }>>`SELECT status FROM notifications WHERE id = ${id}::uuid FOR UPDATE`;
    if (!rows[0]) throw notFound("Notification");
    if (rows[0].status === "sent")
      throw conflict("This notification was delivered; there is nothing to retry", [{ path: "id", message: "Already sent" }]);
    const updated = await tx.notification.update({
      where: { id },
      data: { status: "pending", attempts: 0, nextAttemptAt: new Date(), lastError: null },
    });
    await recordAudit(tx, actor, { action: "notification.retried", targetType: "notification", targetId: id });
    return updated;
  });
  await emitEvent("alerts/notifications.queued", { count: 1 });
  return n;
}
