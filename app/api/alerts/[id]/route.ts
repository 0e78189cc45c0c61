import { alertJson } from "@/lib/alerts/alert-json";
import { getAlertOrThrow } from "@/lib/alerts/queries";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(alerts.getAlert, async ({ principal, params, reply }) =>
  reply(200, { alert: alertJson(await getAlertOrThrow(principal, params.id), principal) }),
);
