import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { appendPodLogs } from "@/lib/workload-logs/append-logs";
import { readPodLogs } from "@/lib/workload-logs/queries";

export const POST = route(workloads.appendPodLogs, async ({ principal, params, body, reply }) =>
  reply(202, await appendPodLogs(principal, params.id, body)),
);

export const GET = route(workloads.readPodLogs, async ({ principal, params, query, reply }) =>
  reply(200, await readPodLogs(principal, params.id, query)),
);
