import "server-only";
import type { Actor, Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { conflict, forbidden, notFound } from "@/lib/errors";
import { readSlurmCluster } from "./queries";
import type { ReportSlurmClusterInput } from "./schemas";
import { ACTIVE_BRIDGE, CLUSTER_KIND, REPORT_SLURM_CLUSTER } from "./statements";

/** Who may speak for a Slurm cluster: its own cluster-wide agent key (its bridge), or an operator. */
function assertBridgeOf(p: Principal, clusterId: string): void {
  if (p.kind === "operator") return;
  if (p.kind !== "agent" || p.clusterId !== clusterId) throw notFound("Cluster");
  if (p.nodeId) throw forbidden("A node-bound agent key speaks for its node only; a Slurm bridge runs with its cluster's agent key");
}

/**
 * The bridge's picture of its Slurm cluster (name, version, partitions, settings), renewing its
 * claim to be the cluster's one active bridge. A second bridge is refused (409) while the active one
 * reports, and takes over once it has been silent for the node lease: two bridges never submit the
 * same placement.
 */
export async function reportSlurmCluster(actor: Actor, clusterId: string, input: ReportSlurmClusterInput) {
  assertBridgeOf(actor.principal, clusterId);
  const leaseS = env().NODE_OFFLINE_AFTER_S;
  await db().$transaction(async (tx) => {
    const kind = (await runOne(tx, CLUSTER_KIND, [clusterId]))?.kind;
    if (!kind) throw notFound("Cluster");
    if (kind !== "slurm")
      throw conflict("This cluster is run by node agents (kind gpu); a Slurm bridge reports for a cluster of kind slurm", [
        { path: "cluster_id", message: "Not a Slurm cluster" },
      ]);
    const row = await runOne(tx, REPORT_SLURM_CLUSTER, [
      clusterId,
      input.slurm_cluster_name,
      input.slurm_version,
      JSON.stringify(input.partitions),
      JSON.stringify(input.settings ?? {}),
      input.container_mode,
      input.bridge_id,
      input.bridge_host ?? null,
      input.bridge_version ?? null,
      leaseS,
    ]);
    if (!row) {
      const active = await runOne(tx, ACTIVE_BRIDGE, [clusterId]);
      const ago = active ? Math.round((Date.now() - active.reported_at.getTime()) / 1000) : 0;
      throw conflict(
        `Another Slurm bridge runs this cluster (${active?.bridge_host ?? "unknown host"}, bridge ${active?.bridge_id.slice(0, 8)}, last report ${ago} s ago); this one takes over once that one has been silent for ${leaseS} s`,
        [{ path: "bridge_id", message: "Not the cluster's active bridge" }],
      );
    }
    if (row.inserted || row.took_over)
      await recordAudit(tx, actor, {
        action: row.inserted ? "slurm.bridge_attached" : "slurm.bridge_took_over",
        targetType: "cluster",
        targetId: clusterId,
        details: {
          bridge_id: input.bridge_id,
          bridge_host: input.bridge_host ?? null,
          slurm_cluster_name: input.slurm_cluster_name,
          slurm_version: input.slurm_version,
          partitions: input.partitions.length,
        },
      });
  });
  return readSlurmCluster(clusterId);
}
