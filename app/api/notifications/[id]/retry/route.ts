import { notificationJson } from "@/lib/alerts/notification-json";
import { retryNotification } from "@/lib/alerts/retry-notification";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const POST = route(alerts.retryNotification, async ({ actor, params, reply }) =>
  reply(200, { notification: notificationJson(await retryNotification(actor, params.id)) }),
);
