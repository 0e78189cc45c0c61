import { createAlertRule, listAlertRules, ruleJson } from "@/lib/alerts/alert-rules";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(alerts.listAlertRules, async ({ reply }) =>
  reply(200, { data: (await listAlertRules()).map(ruleJson), next_cursor: null }),
);

export const POST = route(alerts.createAlertRule, async ({ actor, body, reply }) =>
  reply(201, { rule: ruleJson(await createAlertRule(actor, body)) }),
);
