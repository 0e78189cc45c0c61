import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run, runCount } from "@/lib/db/statement";
import { nodeAddressPolicy } from "@/lib/env";
import { conflict, forbidden, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { assertSlurmReportFits, recordSlurmInventory } from "@/lib/slurm/apply-node-report";
import { nodeAddressProblem, normaliseNodeAddress } from "./node-address";
import { gpuSelect, nodeSelect, type RegisterNodeInput } from "./node-schemas";
import { enqueueNotifications } from "@/lib/alerts/notification-outbox";
import {
  FIRE_NODE_ADDRESS_CHANGED,
  GPUS_REGISTERED_ELSEWHERE,
  LOCK_NODE_BY_HOSTNAME,
  MARK_MISSING_GPUS,
  UPSERT_GPUS,
  UPSERT_NODE,
} from "./statements";

/**
 * Registers a node, or updates it: the same hostname in the same cluster is the same node, and
 * GPUs are matched by UUID. A GPU the agent no longer reports is marked missing (its history
 * stays); one that comes back is present again. An agent key registers into its own cluster
 * only, and never claims a GPU UUID that belongs to another cluster.
 *
 * A node's address says where tenants' traffic and SSH go, so once a node has one only a key
 * bound to that node, or an operator, changes it: a cluster's shared key (a compromised neighbour
 * holds it too) cannot re-register another node at an address of its choosing. Every change is
 * audited and raises an operator alert.
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
      if (bound?.hostname !== input.hostname)
        throw forbidden(`This agent key is bound to node ${bound?.hostname ?? p.nodeId} and registers that node only`);
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
  await assertSlurmReportFits(db(), clusterId, input.slurm);
  const outcome = await db()
    .$transaction(async (tx) => {
      const [existing] = await run(tx, LOCK_NODE_BY_HOSTNAME, [clusterId, input.hostname]);
      const moving = existing !== undefined && address !== null && existing.address !== address;
      if (moving && !(p.kind === "operator" || (p.kind === "agent" && p.nodeId === existing.id)))
        throw conflict("Only a key bound to this node, or an operator, changes a registered node's address", [
          {
            path: "address",
            message: `${input.hostname} is registered ${existing.address ? `at ${existing.address}` : "without an address"}; its own node-bound agent key, or an operator, changes that`,
          },
        ]);
      const [upserted] = await run(tx, UPSERT_NODE, [
        clusterId,
        input.hostname,
        input.pod ?? null,
        input.rack ?? null,
        input.cpu_cores ?? null,
        input.memory_gb ?? null,
        input.agent_version ?? null,
        caps.containers,
        caps.containers ? (caps.runtime ?? null) : null,
        sys.os ?? null,
        sys.kernel ?? null,
        sys.driver_version ?? null,
        sys.cuda_version ?? null,
        address,
      ]);
      const nodeId = upserted!.id;
      if (input.slurm) await recordSlurmInventory(tx, nodeId, input.slurm);

      // GPUs this inventory names that are registered on another node. An agent never takes them:
      // with its key (or another node's, bound or not) it could otherwise pull a running job's GPUs
      // off their node. An operator may move an idle GPU; none moves a GPU that work holds.
      const uuids = input.gpus.map((g) => g.uuid);
      const elsewhere = await run(tx, GPUS_REGISTERED_ELSEWHERE, [clusterId, uuids, nodeId]);
      for (const g of elsewhere) {
        const path = `gpus[${uuids.indexOf(g.uuid)}].uuid`;
        if (g.other_cluster)
          throw conflict("A GPU with this UUID is registered in another cluster", [{ path, message: "Registered in another cluster" }]);
        if (g.held)
          throw conflict(`A GPU with this UUID is registered on node ${g.hostname}, where work holds it`, [
            { path, message: `Held by work on ${g.hostname}` },
          ]);
        if (p.kind === "agent")
          throw conflict(`A GPU with this UUID is registered on node ${g.hostname}; an operator moves a GPU between nodes`, [
            { path, message: `Registered on ${g.hostname}` },
          ]);
      }

      // GPUs that left the inventory go missing first, so a replacement can take their slot.
      const wentMissing = await runCount(tx, MARK_MISSING_GPUS, [nodeId, uuids]);

      if (input.gpus.length) {
        await run(tx, UPSERT_GPUS, [
          nodeId,
          uuids,
          input.gpus.map((g) => g.index),
          input.gpus.map((g) => g.gpu_type),
          input.gpus.map((g) => g.model ?? null),
          input.gpus.map((g) => g.memory_total_mb),
        ]);
      }

      const node = await tx.node.findUniqueOrThrow({ where: { id: nodeId }, select: nodeSelect });
      const gpus = await tx.gpu.findMany({
        where: { nodeId },
        orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }],
        select: gpuSelect,
      });
      let alertId: string | null = null;
      if (moving) {
        await recordAudit(tx, actor, {
          action: "node.address_changed",
          targetType: "node",
          targetId: nodeId,
          details: { hostname: input.hostname, cluster_id: clusterId, from: existing.address, to: address },
        });
        const [alert] = await run(tx, FIRE_NODE_ADDRESS_CHANGED, [
          nodeId,
          `node_address_changed:${nodeId}:${address}`,
          input.hostname,
          clusterId,
          `${input.hostname} now has the address ${address} (it was ${existing.address ?? "none"}), as ${p.label} registered it: the inference gateway and pods' SSH go there from now. Acknowledge if you expected it.`,
          JSON.stringify({ from: existing.address, to: address, by: p.label }),
        ]);
        alertId = alert?.id ?? null;
      }
      await recordAudit(tx, actor, {
        action: upserted!.inserted ? "node.registered" : "node.updated",
        targetType: "node",
        targetId: nodeId,
        details: {
          hostname: input.hostname,
          cluster_id: clusterId,
          gpus: input.gpus.length,
          gpus_missing: wentMissing,
          containers: caps.containers,
        },
      });
      return { node, gpus, created: upserted!.inserted, alertId };
    })
    .catch((e: unknown) => uniqueViolationToConflict(e, "address", "Another node of the fleet has this address"));
  if (outcome.alertId) await enqueueNotifications([outcome.alertId], "firing");
  return { node: outcome.node, gpus: outcome.gpus, created: outcome.created };
}
