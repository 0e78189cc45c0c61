import { endpoints } from "@/lib/api/contracts";
import { reportReplicaAddress } from "@/lib/endpoints/report-replica-address";
import { json, route } from "@/lib/http/route";

export const POST = route(endpoints.reportReplicaAddress, async ({ principal, params, body }) => json(202, await reportReplicaAddress(principal, params.id, params.replica_id, body)));
