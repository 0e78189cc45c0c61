import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { appendJobLogs } from "@/lib/workload-logs/append-logs";
import { readJobLogs } from "@/lib/workload-logs/queries";

export const POST = route(workloads.appendJobLogs, async ({ principal, params, body, reply }) =>
  reply(202, await appendJobLogs(principal, params.id, body)),
);

export const GET = route(workloads.readJobLogs, async ({ principal, params, query, reply }) =>
  reply(200, await readJobLogs(principal, params.id, query)),
);
