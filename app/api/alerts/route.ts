import { alertJson } from "@/lib/alerts/alert-json";
import { listAlerts } from "@/lib/alerts/queries";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(alerts.listAlerts, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listAlerts(principal, query);
  return reply(200, { data: data.map((a) => alertJson(a, principal)), next_cursor: nextCursor });
});
