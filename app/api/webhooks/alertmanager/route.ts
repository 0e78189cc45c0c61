import { ingestAlertmanager } from "@/lib/alerts/ingest-alertmanager";
import { operations } from "@/lib/api/contracts";
import { env } from "@/lib/env";
import { json, route } from "@/lib/http/route";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";

export const POST = route(operations.alertmanagerWebhook, async ({ request, principal, body }) => {
  assertOperatorOrToken(principal, request.headers.get("authorization"), env().ALERTMANAGER_TOKEN, "ALERTMANAGER_TOKEN");
  return json(200, await ingestAlertmanager(body));
});
