import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { readReplicaLogs } from "@/lib/workload-logs/queries";

export const GET = route(workloads.readReplicaLogs, async ({ principal, params, query, reply }) =>
  reply(200, await readReplicaLogs(principal, params.id, query)),
);
