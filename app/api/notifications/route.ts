import { notificationJson } from "@/lib/alerts/notification-json";
import { listNotifications } from "@/lib/alerts/queries";
import { alerts } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";

export const GET = route(alerts.listNotifications, async ({ principal, query }) => {
  const { data, nextCursor } = await listNotifications(principal, query);
  return json(200, { data: data.map(notificationJson), next_cursor: nextCursor });
});
