import { pods } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { reportPodStatus } from "@/lib/pods/report-pod-status";

export const POST = route(pods.reportPodStatus, async ({ principal, params, body, reply }) =>
  reply(202, await reportPodStatus(principal, params.id, body)),
);
