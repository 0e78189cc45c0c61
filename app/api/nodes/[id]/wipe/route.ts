import { handover } from "@/lib/api/contracts";
import { recordWipeReport } from "@/lib/handover/record-wipe-report";
import { route } from "@/lib/http/route";

export const POST = route(handover.recordWipe, async ({ actor, params, body, reply }) => {
  const { created, report } = await recordWipeReport(actor, params.id, body);
  return reply(created ? 201 : 200, { wipe_report: report });
});
