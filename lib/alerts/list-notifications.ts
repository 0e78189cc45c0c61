import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import type { Prisma } from "@/lib/generated/prisma/client";
import { toCsv } from "@/lib/http/csv";
import { contains, dayRange, EXPORT_LIMIT, pageWindow } from "@/lib/http/list-params";
import type { NotificationListParams } from "./schemas";

const ORDER: Record<NotificationListParams["sort"], Prisma.NotificationOrderByWithRelationInput[]> = {
  newest: [{ createdAt: "desc" }, { id: "desc" }],
  oldest: [{ createdAt: "asc" }, { id: "asc" }],
  attempts: [{ attempts: "desc" }, { createdAt: "desc" }],
};

function where(q: NotificationListParams): Prisma.NotificationWhereInput {
  const days = dayRange(q.from, q.to);
  return {
    ...(q.status ? { status: q.status } : {}),
    ...(q.channel ? { channel: q.channel } : {}),
    ...(q.kind ? { kind: q.kind } : {}),
    ...(q.q ? { OR: [{ subject: contains(q.q) }, { target: contains(q.q) }, { lastError: contains(q.q) }] } : {}),
    ...(days ? { createdAt: days } : {}),
  };
}

/** One page of the outbox matching the filters, and how many match. */
export async function listNotificationsPage(p: Principal, q: NotificationListParams) {
  assertOperator(p);
  const w = where(q);
  const [rows, total] = await Promise.all([
    db().notification.findMany({ where: w, orderBy: ORDER[q.sort], ...pageWindow(q) }),
    db().notification.count({ where: w }),
  ]);
  return { rows, total };
}

export async function notificationsCsv(p: Principal, q: NotificationListParams): Promise<string> {
  assertOperator(p);
  const rows = await db().notification.findMany({ where: where(q), orderBy: ORDER[q.sort], take: EXPORT_LIMIT });
  return toCsv(
    [
      "id",
      "created_at",
      "kind",
      "channel",
      "target",
      "subject",
      "status",
      "attempts",
      "sent_at",
      "last_error",
      "alert_id",
      "demo_request_id",
    ],
    rows.map((n) => [
      n.id,
      n.createdAt.toISOString(),
      n.kind,
      n.channel,
      n.target,
      n.subject,
      n.status,
      n.attempts,
      n.sentAt?.toISOString() ?? "",
      n.lastError ?? "",
      n.alertEventId ?? "",
      n.demoRequestId ?? "",
    ]),
  );
}
