import { ingestAlertmanager } from "@/lib/alerts/ingest-alertmanager";
import { operations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";

export const POST = route(operations.alertmanagerWebhook, async ({ machineToken, principal, body, reply }) => {
  assertOperatorOrToken(principal, machineToken, "ALERTMANAGER_TOKEN");
  return reply(200, await ingestAlertmanager(body));
});
