import { notificationJson } from "@/lib/alerts/notification-json";
import { listNotifications } from "@/lib/alerts/queries";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(alerts.listNotifications, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listNotifications(principal, query);
  return reply(200, { data: data.map(notificationJson), next_cursor: nextCursor });
});
