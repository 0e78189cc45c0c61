import { alertJson } from "@/lib/alerts/alert-json";
import { listAlerts } from "@/lib/alerts/queries";
import { alerts } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";

export const GET = route(alerts.listAlerts, async ({ principal, query }) => {
  const { data, nextCursor } = await listAlerts(principal, query);
  return json(200, { data: data.map((a) => alertJson(a, principal)), next_cursor: nextCursor });
});
