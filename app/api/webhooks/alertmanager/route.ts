import { ingestAlertmanager } from "@/lib/alerts/ingest-alertmanager";
import { operations } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";

export const POST = route(operations.alertmanagerWebhook, async ({ machineToken, principal, body }) => {
  assertOperatorOrToken(principal, machineToken, "ALERTMANAGER_TOKEN");
  return json(200, await ingestAlertmanager(body));
});
