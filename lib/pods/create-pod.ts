import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { assertFitsOnNodes } from "@/lib/endpoints/assert-fits-on-nodes";
import { isUniqueViolation, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { lockTenant } from "@/lib/tenants/lock-tenant";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { assertPodLimit, limitRefusal } from "@/lib/tenants/tenant-limits";
import { getPodOrThrow } from "./queries";
import type { CreatePodInput } from "./schemas";

/**
 * Creates a pod: pending until a scheduling cycle places it (woken at once) on one node that runs
 * containers, within the tenant's quota. A pod that could never run (more GPUs than the quota, or
 * than any one node has) is refused with 422; a name the tenant already uses, with 409.
 */
export async function createPod(actor: Actor, input: CreatePodInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  let id: string;
  try {
    id = await db().$transaction(
      async (tx) => {
        const tenant = await lockTenant(tx, tenantId);
        await assertPodLimit(tx, tenantId);
        if (input.cluster_id && !(await tx.cluster.count({ where: { id: input.cluster_id } })))
          throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
        await assertFitsOnNodes(
          tx,
          tenant.gpu_quota,
          { gpu_type: input.gpu_type, per_node: input.gpu_count, copies: 1, cluster_id: input.cluster_id ?? null },
          { copies: "gpu_count", per_node: "gpu_count", noun: "pod" },
        );
        const pod = await tx.pod.create({
          data: {
            tenantId,
            name: input.name,
            gpuType: input.gpu_type,
            gpuCount: input.gpu_count,
            clusterId: input.cluster_id ?? null,
            image: input.image,
            ports: input.ports,
            sshPublicKey: input.ssh_public_key ?? null,
            restartOnFailure: input.restart_on_failure,
            pendingReason: "Waiting for the next scheduling cycle",
            createdBy: actor.principal.label,
          },
          select: { id: true },
        });
        await tx.podEvent.create({
          data: { podId: pod.id, fromStatus: null, toStatus: "pending", reason: "created", actor: actor.principal.label },
        });
        await recordAudit(tx, actor, {
          action: "pod.created",
          targetType: "pod",
          targetId: pod.id,
          tenantId,
          details: { name: input.name, gpu_type: input.gpu_type, gpu_count: input.gpu_count, image: input.image, ports: input.ports },
        });
        return pod.id;
        // parallel creates of one tenant queue on its row lock (its pod limit is counted under it)
      },
      { timeout: 15_000, maxWait: 15_000 },
    );
  } catch (e) {
    if (!isUniqueViolation(e)) limitRefusal(e);
    uniqueViolationToConflict(e, "name", "A pod with this name already exists");
  }
  await emitEvent("scheduler/run.requested", { reason: "pod created" });
  return getPodOrThrow(actor.principal, id);
}
