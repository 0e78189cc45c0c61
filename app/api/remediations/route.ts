import { listRemediations } from "@/lib/alerts/queries";
import { remediationJson } from "@/lib/alerts/remediation-json";
import { alerts } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";

export const GET = route(alerts.listRemediations, async ({ principal, query }) => {
  const { data, nextCursor, cap } = await listRemediations(principal, query);
  return json(200, { data: data.map(remediationJson), next_cursor: nextCursor, cap });
});
