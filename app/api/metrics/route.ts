import { operations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { metricsExposition } from "@/lib/observability/exposition";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";

export const GET = route(operations.metrics, async ({ machineToken, principal, send }) => {
  assertOperatorOrToken(principal, machineToken, "METRICS_TOKEN");
  const { contentType, body } = await metricsExposition();
  return send(200, body, { "content-type": contentType, "cache-control": "no-store" });
});
