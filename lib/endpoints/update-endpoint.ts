import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { tenantScopeSql } from "@/lib/auth/tenant-scope";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { forbidden, notFound, validationFailed, type FieldIssue } from "@/lib/errors";
import { lockTenant } from "@/lib/tenants/lock-tenant";
import { assertFitsOnNodes } from "./assert-fits-on-nodes";
import { getEndpointOrThrow } from "./get-endpoint";
import { reconcileEndpoints } from "./reconcile-endpoints";
import type { UpdateEndpointInput } from "./schemas";

/** Changes replicas, bounds, SLA targets or autoscaling, or stops/starts the endpoint; replicas follow at once. */
export async function updateEndpoint(actor: Actor, id: string, input: UpdateEndpointInput) {
  const p = actor.principal;
  if (p.kind === "agent") throw forbidden("Agents do not change endpoints");
  await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      Array<{
        tenant_id: string;
        desired_replicas: number;
        min_replicas: number;
        max_replicas: number;
        gpus_per_replica: number;
        gpu_type: string;
        cluster_id: string | null;
        autoscale_metric: string;
        autoscale_target: number | null;
        stop_requested: boolean;
      }>
    >`
      SELECT tenant_id, desired_replicas, min_replicas, max_replicas, gpus_per_replica, gpu_type, cluster_id, autoscale_metric, autoscale_target, stop_requested
        FROM endpoints WHERE id = ${id}::uuid AND deleted_at IS NULL AND ${tenantScopeSql(p, "tenant_id")} FOR NO KEY UPDATE`;
    const cur = rows[0];
    if (!cur) throw notFound("Endpoint");

    const desired = input.replicas ?? cur.desired_replicas;
    // a new replica count outside the old bounds moves the bound with it, unless the bound is given too
    const min = input.min_replicas ?? Math.min(cur.min_replicas, desired);
    const max = input.max_replicas ?? Math.max(cur.max_replicas, desired);
    const issues: FieldIssue[] = [];
    if (min > desired)
      issues.push({
        path: input.min_replicas !== undefined ? "min_replicas" : "replicas",
        message: `min_replicas (${min}) cannot exceed replicas (${desired})`,
      });
    if (max < desired)
      issues.push({
        path: input.max_replicas !== undefined ? "max_replicas" : "replicas",
        message: `max_replicas (${max}) cannot be below replicas (${desired})`,
      });
    const metric = input.autoscale_metric ?? cur.autoscale_metric;
    const target = input.autoscale_target !== undefined ? input.autoscale_target : metric === "none" ? null : cur.autoscale_target;
    if (metric !== "none" && target === null) issues.push({ path: "autoscale_target", message: "Required when autoscale_metric is set" });
    if (metric === "none" && input.autoscale_target != null)
      issues.push({ path: "autoscale_target", message: "Only with an autoscale_metric" });
    if (issues.length) throw validationFailed(issues);
    const tenant = await lockTenant(tx, cur.tenant_id);
    await assertFitsOnNodes(tx, tenant.gpu_quota, {
      gpu_type: cur.gpu_type,
      per_node: cur.gpus_per_replica,
      copies: min,
      cluster_id: cur.cluster_id,
    });

    const desiredChanged = desired !== cur.desired_replicas;
    await tx.endpoint.update({
      where: { id },
      data: {
        desiredReplicas: desired,
        minReplicas: min,
        maxReplicas: max,
        ...(desiredChanged ? { scalingFrom: cur.desired_replicas, lastScaledAt: new Date() } : {}),
        ...(input.sla_p95_ms !== undefined ? { slaP95Ms: input.sla_p95_ms } : {}),
        ...(input.sla_availability_pct !== undefined ? { slaAvailabilityPct: input.sla_availability_pct } : {}),
        autoscaleMetric: metric,
        autoscaleTarget: metric === "none" ? null : target,
        ...(input.cooldown_s !== undefined ? { cooldownS: input.cooldown_s } : {}),
        ...(input.stopped !== undefined ? { stopRequested: input.stopped } : {}),
      },
    });
    if (desiredChanged) {
      await tx.endpointScalingDecision.create({
        data: {
          endpointId: id,
          fromReplicas: cur.desired_replicas,
          toReplicas: desired,
          metric: "manual",
          outcome: desired > cur.desired_replicas ? "scale_up" : "scale_down",
          reason: `set by ${p.label}`,
        },
      });
    }
    await recordAudit(tx, actor, {
      action: input.stopped === true ? "endpoint.stopped" : input.stopped === false ? "endpoint.started" : "endpoint.updated",
      targetType: "endpoint",
      targetId: id,
      tenantId: cur.tenant_id,
      details: { ...input },
    });
  });
  await reconcileEndpoints({ endpointId: id });
  return getEndpointOrThrow(p, id);
}
