import { alerts } from "@/lib/api/contracts";
import { alertsCsv } from "@/lib/alerts/list-alerts";
import { csvResponse, route } from "@/lib/http/route";

export const GET = route(alerts.exportAlerts, async ({ principal, query, send }) =>
  send(200, csvResponse("alerts", await alertsCsv(principal, query))),
);
