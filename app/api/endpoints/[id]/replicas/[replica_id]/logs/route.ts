import { workloads } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { appendReplicaLogs } from "@/lib/workload-logs/append-logs";

export const POST = route(workloads.appendReplicaLogs, async ({ principal, params, body, reply }) =>
  reply(202, await appendReplicaLogs(principal, params.id, params.replica_id, body)),
);
