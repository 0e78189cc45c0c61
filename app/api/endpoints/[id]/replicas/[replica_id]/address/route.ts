import { endpoints } from "@/lib/api/contracts";
import { reportReplicaAddress } from "@/lib/endpoints/report-replica-address";
import { route } from "@/lib/http/route";

export const POST = route(endpoints.reportReplicaAddress, async ({ principal, params, body, reply }) =>
  reply(202, await reportReplicaAddress(principal, params.id, params.replica_id, body)),
);
