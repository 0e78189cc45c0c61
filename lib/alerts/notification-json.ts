import type { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { oneOf } from "@/lib/vocabulary";
import { NOTIFICATION_CHANNELS, NOTIFICATION_KINDS, NOTIFICATION_STATUSES, type notificationJsonSchema } from "./schemas";

type NotificationRow = Prisma.NotificationGetPayload<object>;

export function notificationJson(n: NotificationRow): z.input<typeof notificationJsonSchema> {
  return {
    id: n.id,
    alert_id: n.alertEventId,
    demo_request_id: n.demoRequestId,
    kind: oneOf(NOTIFICATION_KINDS, n.kind, "notifications.kind"),
    channel: oneOf(NOTIFICATION_CHANNELS, n.channel, "notifications.channel"),
    target: n.target,
    subject: n.subject,
    status: oneOf(NOTIFICATION_STATUSES, n.status, "notifications.status"),
    attempts: n.attempts,
    next_attempt_at: n.status === "pending" ? n.nextAttemptAt.toISOString() : null,
    last_error: n.lastError,
    sent_at: n.sentAt?.toISOString() ?? null,
    created_at: n.createdAt.toISOString(),
  };
}
