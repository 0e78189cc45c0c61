import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { assertFitsReservation } from "@/lib/jobs/assert-satisfiable";
import { lockTenant } from "@/lib/tenants/lock-tenant";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { assertFitsOnNodes } from "./assert-fits-on-nodes";
import { getEndpointOrThrow } from "./get-endpoint";
import { reconcileEndpoints } from "./reconcile-endpoints";
import type { CreateEndpointInput } from "./schemas";

/** Creates an endpoint and places its replicas at once (what cannot be placed yet waits for capacity). */
export async function createEndpoint(actor: Actor, input: CreateEndpointInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const min = input.min_replicas ?? input.replicas;
  const max = input.max_replicas ?? input.replicas;
  let id: string;
  try {
    id = await db().$transaction(async (tx) => {
      const tenant = await lockTenant(tx, tenantId);
      if (input.cluster_id && !(await tx.cluster.count({ where: { id: input.cluster_id } })))
        throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
      await assertFitsOnNodes(tx, tenant.gpu_quota, {
        gpu_type: input.gpu_type,
        per_node: input.gpus_per_replica,
        copies: min,
        cluster_id: input.cluster_id ?? null,
      });
      if (input.reservation_id)
        await assertFitsReservation(tx, tenantId, {
          reservation_id: input.reservation_id,
          gpu_type: input.gpu_type,
          gpu_count: input.gpus_per_replica,
          cluster_id: input.cluster_id,
        });
      const e = await tx.endpoint.create({
        data: {
          tenantId,
          name: input.name,
          model: input.model,
          image: input.image ?? null,
          gpuType: input.gpu_type,
          gpusPerReplica: input.gpus_per_replica,
          clusterId: input.cluster_id ?? null,
          reservationId: input.reservation_id ?? null,
          desiredReplicas: input.replicas,
          minReplicas: min,
          maxReplicas: max,
          slaP95Ms: input.sla_p95_ms ?? null,
          slaAvailabilityPct: input.sla_availability_pct ?? null,
          autoscaleMetric: input.autoscale_metric,
          autoscaleTarget: input.autoscale_target ?? null,
          cooldownS: input.cooldown_s,
          servingPort: input.serving_port ?? 8000,
          healthPath: input.health_path ?? "/health",
          statusReason: "placing replicas",
          createdBy: actor.principal.label,
        },
        select: { id: true },
      });
      await tx.endpointEvent.create({
        data: { endpointId: e.id, fromStatus: null, toStatus: "provisioning", reason: "created", actor: actor.principal.label },
      });
      await recordAudit(tx, actor, {
        action: "endpoint.created",
        targetType: "endpoint",
        targetId: e.id,
        tenantId,
        details: {
          name: input.name,
          model: input.model,
          replicas: input.replicas,
          gpus_per_replica: input.gpus_per_replica,
          gpu_type: input.gpu_type,
        },
      });
      return e.id;
    });
  } catch (e) {
    uniqueViolationToConflict(e, "name", "An endpoint with this name already exists");
  }
  await reconcileEndpoints({ endpointId: id });
  return getEndpointOrThrow(actor.principal, id);
}
