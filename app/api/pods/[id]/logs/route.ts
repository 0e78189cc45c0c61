import { workloads } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { appendPodLogs } from "@/lib/workload-logs/append-logs";
import { readPodLogs } from "@/lib/workload-logs/queries";

export const POST = route(workloads.appendPodLogs, async ({ principal, params, body }) => json(202, await appendPodLogs(principal, params.id, body)));

export const GET = route(workloads.readPodLogs, async ({ principal, params, query }) => json(200, await readPodLogs(principal, params.id, query)));
