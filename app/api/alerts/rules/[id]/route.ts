import { ruleJson, updateAlertRule } from "@/lib/alerts/alert-rules";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const PATCH = route(alerts.updateAlertRule, async ({ actor, params, body, reply }) =>
  reply(200, { rule: ruleJson(await updateAlertRule(actor, params.id, body)) }),
);
