import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { nodeAddressPolicy } from "@/lib/env";
import { conflict, forbidden, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { nodeAddressProblem, normaliseNodeAddress } from "./node-address";
import { gpuSelect, nodeSelect, type RegisterNodeInput } from "./node-schemas";

/**
 * Registers a node, or updates it: the same hostname in the same cluster is the same node, and
 * GPUs are matched by UUID. A GPU the agent no longer reports is marked missing (its history
 * stays); one that comes back is present again. An agent key registers into its own cluster
 * only, and never claims a GPU UUID that belongs to another cluster.
 */
export async function registerNode(actor: Actor, input: RegisterNodeInput) {
  const p = actor.principal;
  let clusterId: string;
  if (p.kind === "agent") {
    if (input.cluster_id && input.cluster_id !== p.clusterId) throw forbidden("Agent keys register nodes into their own cluster only");
    clusterId = p.clusterId;
    if (p.nodeId) {
      // a node-bound key re-registers its own node, under its own hostname, and nothing else
      const bound = await db().node.findUnique({ where: { id: p.nodeId }, select: { hostname: true } });
      if (bound?.hostname !== input.hostname) throw forbidden(`This agent key is bound to node ${bound?.hostname ?? p.nodeId} and registers that node only`);
    }
  } else if (p.kind === "operator") {
    if (!input.cluster_id) throw validationFailed([{ path: "cluster_id", message: "Required with an operator key" }]);
    if (!(await db().cluster.count({ where: { id: input.cluster_id } }))) {
      throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
    }
    clusterId = input.cluster_id;
  } else {
    throw forbidden("Only agents and operators register nodes");
  }

  // An agent that says nothing of containers (an older one) runs nothing but placeholders there.
  const caps = input.capabilities ?? { containers: false };
  const sys = input.system ?? {};
  const address = input.address === undefined ? null : normaliseNodeAddress(input.address);
  const addressProblem = input.address === undefined ? null : nodeAddressProblem(input.address, nodeAddressPolicy());
  if (addressProblem) throw validationFailed([{ path: "address", message: addressProblem }]);
  return db().$transaction(async (tx) => {
    const [upserted] = await tx.$queryRaw<Array<{ id: string; inserted: boolean }>>`
      INSERT INTO nodes (cluster_id, hostname, pod, rack, cpu_cores, memory_gb, agent_version,
                         containers, container_runtime, os, kernel, driver_version, cuda_version, address)
      VALUES (${clusterId}::uuid, ${input.hostname}, ${input.pod ?? null}, ${input.rack ?? null},
              ${input.cpu_cores ?? null}::int, ${input.memory_gb ?? null}::int, ${input.agent_version ?? null},
              ${caps.containers}, ${caps.containers ? (caps.runtime ?? null) : null}, ${sys.os ?? null}, ${sys.kernel ?? null},
              ${sys.driver_version ?? null}, ${sys.cuda_version ?? null}, ${address})
      ON CONFLICT (cluster_id, hostname) DO UPDATE SET
        pod = EXCLUDED.pod, rack = EXCLUDED.rack, cpu_cores = EXCLUDED.cpu_cores,
        memory_gb = EXCLUDED.memory_gb, agent_version = EXCLUDED.agent_version,
        containers = EXCLUDED.containers, container_runtime = EXCLUDED.container_runtime, os = EXCLUDED.os, kernel = EXCLUDED.kernel,
        driver_version = EXCLUDED.driver_version, cuda_version = EXCLUDED.cuda_version,
        -- an agent that does not say keeps the address it reported before
        address = COALESCE(EXCLUDED.address, nodes.address), updated_at = now()
      RETURNING id, (xmax = 0) AS inserted`;
    const nodeId = upserted!.id;

    // GPUs this inventory names that are registered on another node. An agent never takes them:
    // with its key (or another node's, bound or not) it could otherwise pull a running job's GPUs
    // off their node. An operator may move an idle GPU; none moves a GPU that work holds.
    const uuids = input.gpus.map((g) => g.uuid);
    const elsewhere = await tx.$queryRaw<Array<{ uuid: string; other_cluster: boolean; held: boolean; hostname: string }>>`
      SELECT g.uuid, n.cluster_id <> ${clusterId}::uuid AS other_cluster,
             (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL OR g.allocated_pod_id IS NOT NULL) AS held, n.hostname
        FROM gpus g JOIN nodes n ON n.id = g.node_id
       WHERE g.uuid = ANY(${uuids}::text[]) AND g.node_id <> ${nodeId}::uuid`;
    for (const g of elsewhere) {
      const path = `gpus[${uuids.indexOf(g.uuid)}].uuid`;
      if (g.other_cluster) throw conflict("A GPU with this UUID is registered in another cluster", [{ path, message: "Registered in another cluster" }]);
      if (g.held) throw conflict(`A GPU with this UUID is registered on node ${g.hostname}, where work holds it`, [{ path, message: `Held by work on ${g.hostname}` }]);
      if (p.kind === "agent") throw conflict(`A GPU with this UUID is registered on node ${g.hostname}; an operator moves a GPU between nodes`, [{ path, message: `Registered on ${g.hostname}` }]);
    }

    // GPUs that left the inventory go missing first, so a replacement can take their slot.
    const wentMissing = await tx.$executeRaw`
      UPDATE gpus SET status = 'missing', missing_since = now(), unhealthy_reason = NULL, updated_at = now()
       WHERE node_id = ${nodeId}::uuid AND missing_since IS NULL AND NOT (uuid = ANY(${uuids}::text[]))`;

    if (input.gpus.length) {
      await tx.$executeRaw`
        INSERT INTO gpus (node_id, uuid, index, gpu_type, model, memory_total_mb)
        SELECT ${nodeId}::uuid, t.uuid, t.idx, t.gpu_type, t.model, t.mem
          FROM unnest(${uuids}::text[], ${input.gpus.map((g) => g.index)}::int[], ${input.gpus.map((g) => g.gpu_type)}::text[],
                      ${input.gpus.map((g) => g.model ?? null)}::text[], ${input.gpus.map((g) => g.memory_total_mb)}::int[])
               AS t(uuid, idx, gpu_type, model, mem)
        ON CONFLICT (uuid) DO UPDATE SET
          node_id = EXCLUDED.node_id, index = EXCLUDED.index, gpu_type = EXCLUDED.gpu_type, model = EXCLUDED.model,
          memory_total_mb = EXCLUDED.memory_total_mb,
          status = CASE WHEN gpus.status = 'missing' THEN 'available' ELSE gpus.status END,
          missing_since = NULL, updated_at = now()`;
    }

    const node = await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect });
    const gpus = await tx.gpu.findMany({ where: { nodeId }, orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }], select: gpuSelect });
    await recordAudit(tx, actor, {
      action: upserted!.inserted ? "node.registered" : "node.updated",
      targetType: "node",
      targetId: nodeId,
      details: { hostname: input.hostname, cluster_id: clusterId, gpus: input.gpus.length, gpus_missing: wentMissing, containers: caps.containers },
    });
    return { node, gpus, created: upserted!.inserted };
  }).catch((e: unknown) => uniqueViolationToConflict(e, "address", "Another node of the fleet has this address"));
}
