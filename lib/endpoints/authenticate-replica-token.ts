import "server-only";
import type { WorkloadPrincipal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { forbidden, unauthorized } from "@/lib/errors";
import { replicaOfToken, tokenMatches } from "./replica-token";

/** Resolves a serving container's report token to its replica, while that placement is live. */
export async function authenticateReplicaToken(token: string): Promise<WorkloadPrincipal> {
  const replicaId = replicaOfToken(token);
  if (!replicaId) throw unauthorized("Invalid report token");
  const { rows } = await pool().query<{ fence: string; endpoint_id: string; tenant_id: string; status: string; tenant_status: string }>({
    name: "authenticate_replica_token",
    text: `SELECT r.fence::text AS fence, r.endpoint_id, r.tenant_id, r.status, t.status AS tenant_status
             FROM endpoint_replicas r JOIN tenants t ON t.id = r.tenant_id WHERE r.id = $1`,
    values: [replicaId],
  });
  const r = rows[0];
  if (!r || r.status === "stopped" || !tokenMatches(token, replicaId, r.fence)) throw unauthorized("Invalid or expired report token");
  if (r.tenant_status !== "active") throw forbidden("Tenant is suspended");
  return {
    kind: "workload",
    placement: "replica",
    replicaId,
    endpointId: r.endpoint_id,
    tenantId: r.tenant_id,
    label: `replica ${replicaId.slice(0, 8)}`,
  };
}
