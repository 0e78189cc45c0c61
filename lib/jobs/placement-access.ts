import "server-only";
import type { AgentPrincipal } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/client";

/**
 * Whether an agent may report on a job: some placement of it ran on a node of the agent's cluster
 * (that node, for a node-bound key). Any placement, not only the current one: a node that was cut
 * off must be told its report is stale (409), not that the job does not exist.
 */
export async function agentMayReportOn(tx: Pick<Tx, "$queryRaw">, p: AgentPrincipal, jobId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<Array<{ ok: boolean }>>`
    SELECT EXISTS (
      SELECT 1 FROM job_placements jp JOIN nodes n ON n.id = ANY(jp.node_ids)
       WHERE jp.job_id = ${jobId}::uuid AND n.cluster_id = ${p.clusterId}::uuid
         AND (${p.nodeId ?? null}::uuid IS NULL OR n.id = ${p.nodeId ?? null}::uuid)) AS ok`;
  return rows[0]?.ok ?? false;
}
