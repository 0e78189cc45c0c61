import { listRemediations } from "@/lib/alerts/queries";
import { remediationJson } from "@/lib/alerts/remediation-json";
import { alerts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(alerts.listRemediations, async ({ principal, query, reply }) => {
  const { data, nextCursor, cap } = await listRemediations(principal, query);
  return reply(200, { data: data.map(remediationJson), next_cursor: nextCursor, cap });
});
