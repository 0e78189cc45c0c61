import { alerts } from "@/lib/api/contracts";
import { notificationsCsv } from "@/lib/alerts/list-notifications";
import { csvResponse, route } from "@/lib/http/route";

export const GET = route(alerts.exportNotifications, async ({ principal, query, send }) =>
  send(200, csvResponse("notifications", await notificationsCsv(principal, query))),
);
