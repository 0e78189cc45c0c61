import { acknowledgeAlert } from "@/lib/alerts/acknowledge-alert";
import { alertJson } from "@/lib/alerts/alert-json";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const POST = route(alerts.acknowledgeAlert, async ({ actor, params, reply }) =>
  reply(200, { alert: alertJson(await acknowledgeAlert(actor, params.id), actor.principal) }),
);
