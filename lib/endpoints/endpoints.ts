import "server-only";
import type { Actor, Principal, TenantPrincipal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { forbidden, notFound, unsatisfiable, uniqueViolationToConflict, validationFailed, type FieldIssue } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { assertFitsReservation } from "@/lib/jobs/assert-satisfiable";
import { submittingTenant } from "@/lib/jobs/submit-job";
import { oneOf } from "@/lib/vocabulary";
import { reconcileEndpoints } from "./reconcile-endpoints";
import type { CreateEndpointInput, EndpointJson, UpdateEndpointInput } from "./schemas";
import { ENDPOINT_STATUSES, REPLICA_STATUSES } from "./endpoint-lifecycle";

const RECENT_STOPPED = 10;

// the newest replicas: every live one (at most max_replicas, 64) and the last few stopped
const endpointInclude = {
  replicas: {
    orderBy: [{ startedAt: "desc" as const }],
    take: 64 + RECENT_STOPPED,
    include: { gpus: { select: { id: true, index: true, node: { select: { hostname: true } } }, orderBy: { index: "asc" as const } } },
  },
};
type EndpointRow = NonNullable<Awaited<ReturnType<typeof findVisible>>>;

function scopeWhere(p: Principal) {
  if (p.kind === "tenant") return { tenantId: p.tenantId };
  if (p.kind === "agent") throw forbidden("Agents see the replicas assigned to them through heartbeats");
  return {};
}

function findVisible(p: Principal, id: string) {
  return db().endpoint.findFirst({ where: { id, deletedAt: null, ...scopeWhere(p) }, include: endpointInclude });
}

export async function getEndpointOrThrow(p: Principal, id: string) {
  const e = await findVisible(p, id);
  if (!e) throw notFound("Endpoint");
  return e;
}

export function endpointJson(e: EndpointRow): EndpointJson {
  const live = e.replicas.filter((r) => r.status !== "stopped");
  const stopped = e.replicas.filter((r) => r.status === "stopped").slice(0, RECENT_STOPPED);
  return {
    id: e.id,
    tenant_id: e.tenantId,
    name: e.name,
    model: e.model,
    image: e.image,
    gpu_type: e.gpuType,
    gpus_per_replica: e.gpusPerReplica,
    cluster_id: e.clusterId,
    reservation_id: e.reservationId,
    replicas: e.desiredReplicas,
    min_replicas: e.minReplicas,
    max_replicas: e.maxReplicas,
    ready_replicas: live.filter((r) => r.status === "ready").length,
    gpus_held: live.reduce((s, r) => s + r.gpus.length, 0),
    sla_p95_ms: e.slaP95Ms,
    sla_availability_pct: e.slaAvailabilityPct,
    autoscale_metric: e.autoscaleMetric as EndpointJson["autoscale_metric"],
    autoscale_target: e.autoscaleTarget,
    cooldown_s: e.cooldownS,
    status: oneOf(ENDPOINT_STATUSES, e.status, "endpoints.status"),
    status_reason: e.statusReason,
    stopped: e.stopRequested,
    replica_list: [...live, ...stopped].map((r) => ({
      id: r.id,
      status: oneOf(REPLICA_STATUSES, r.status, "endpoint_replicas.status"),
      node_id: r.nodeId,
      hostname: r.gpus[0]?.node.hostname ?? null,
      gpu_ids: r.gpus.map((g) => g.id),
      gpu_indexes: r.gpus.map((g) => g.index),
      health_reason: r.healthReason,
      started_at: r.startedAt.toISOString(),
      ready_at: r.readyAt?.toISOString() ?? null,
      last_sample_at: r.lastSampleAt?.toISOString() ?? null,
      stopped_at: r.stoppedAt?.toISOString() ?? null,
      stop_reason: r.stopReason,
    })),
    url: endpointUrl(e.id),
    serving_port: e.servingPort,
    health_path: e.healthPath,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

/** Where tenants call an endpoint: the inference gateway's base URL (GATEWAY_PUBLIC_URL, else the app's own). */
export function endpointUrl(id: string): string {
  const base = (env().GATEWAY_PUBLIC_URL ?? env().NEXTAUTH_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  return `${base}/v1/endpoints/${id}`;
}

export async function listEndpoints(p: Principal, opts: { limit: number; cursor?: string; status?: string; tenant_id?: string }) {
  const tenantId = p.kind === "tenant" ? p.tenantId : opts.tenant_id;
  const rows = await db().endpoint.findMany({
    where: { deletedAt: null, ...scopeWhere(p), ...(tenantId ? { tenantId } : {}), ...(opts.status ? { status: opts.status } : {}), ...afterCursor(decodeCursor(opts.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    include: endpointInclude,
  });
  return page(rows, opts.limit);
}

/**
 * Refuses (422) work of one or more copies that each run on one node (an endpoint's replicas, a
 * pod) when it could never run: its minimum copies need more GPUs than the tenant's whole quota,
 * or no node of the fleet (of its cluster) that runs containers has `per_node` GPUs of the type.
 * `paths` name the request fields the refusal points at.
 */
export async function assertFitsOnNodes(
  tx: Tx,
  tenantQuota: number,
  e: { gpu_type: string; per_node: number; copies: number; cluster_id: string | null },
  paths = { copies: "min_replicas", per_node: "gpus_per_replica", noun: "replica" },
) {
  const needed = e.per_node * e.copies;
  if (needed > tenantQuota) {
    throw unsatisfiable(`${e.copies} ${paths.noun}(s) of ${e.per_node} GPUs need ${needed} GPUs but the tenant's whole quota is ${tenantQuota}`, [
      { path: paths.copies, message: `Needs ${needed} GPUs, over the quota of ${tenantQuota}` },
    ]);
  }
  const [{ biggest }] = await tx.$queryRaw<[{ biggest: number }]>`
    SELECT COALESCE(max(n), 0)::int AS biggest FROM (
      SELECT count(*) AS n FROM gpus g JOIN nodes nd ON nd.id = g.node_id
       WHERE g.gpu_type = ${e.gpu_type} AND g.status <> 'missing' AND nd.containers AND (${e.cluster_id}::uuid IS NULL OR nd.cluster_id = ${e.cluster_id}::uuid)
       GROUP BY g.node_id) x`;
  if (biggest < e.per_node) {
    throw unsatisfiable(
      biggest === 0
        ? `The fleet has no ${e.gpu_type} GPUs on nodes that run containers${e.cluster_id ? " in that cluster" : ""}`
        : `No node that runs containers has ${e.per_node} ${e.gpu_type} GPUs (the largest has ${biggest}); a ${paths.noun} runs on one node`,
      [{ path: biggest === 0 ? "gpu_type" : paths.per_node, message: biggest === 0 ? `No ${e.gpu_type} GPUs` : `At most ${biggest} per node` }],
    );
  }
}

/** Locks a tenant's row (quota and status) for work being created for it; a suspended tenant gets 403. */
export async function lockTenant(tx: Tx, tenantId: string) {
  const rows = await tx.$queryRaw<Array<{ gpu_quota: number; status: string }>>`SELECT gpu_quota, status FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
  if (!rows[0]) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
  if (rows[0].status !== "active") throw forbidden("Tenant is suspended");
  return rows[0];
}

/** Creates an endpoint and places its replicas at once (what cannot be placed yet waits for capacity). */
export async function createEndpoint(actor: Actor, input: CreateEndpointInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const min = input.min_replicas ?? input.replicas;
  const max = input.max_replicas ?? input.replicas;
  let id: string;
  try {
    id = await db().$transaction(async (tx) => {
      const tenant = await lockTenant(tx, tenantId);
      if (input.cluster_id && !(await tx.cluster.count({ where: { id: input.cluster_id } }))) throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);
      await assertFitsOnNodes(tx, tenant.gpu_quota, { gpu_type: input.gpu_type, per_node: input.gpus_per_replica, copies: min, cluster_id: input.cluster_id ?? null });
      if (input.reservation_id) await assertFitsReservation(tx, tenantId, { reservation_id: input.reservation_id, gpu_type: input.gpu_type, gpu_count: input.gpus_per_replica, cluster_id: input.cluster_id });
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
      await tx.endpointEvent.create({ data: { endpointId: e.id, fromStatus: null, toStatus: "provisioning", reason: "created", actor: actor.principal.label } });
      await recordAudit(tx, actor, { action: "endpoint.created", targetType: "endpoint", targetId: e.id, tenantId, details: { name: input.name, model: input.model, replicas: input.replicas, gpus_per_replica: input.gpus_per_replica, gpu_type: input.gpu_type } });
      return e.id;
    });
  } catch (e) {
    uniqueViolationToConflict(e, "name", "An endpoint with this name already exists");
  }
  await reconcileEndpoints({ endpointId: id });
  return getEndpointOrThrow(actor.principal, id);
}

/** Changes replicas, bounds, SLA targets or autoscaling, or stops/starts the endpoint; replicas follow at once. */
export async function updateEndpoint(actor: Actor, id: string, input: UpdateEndpointInput) {
  const p = actor.principal;
  await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ tenant_id: string; desired_replicas: number; min_replicas: number; max_replicas: number; gpus_per_replica: number; gpu_type: string; cluster_id: string | null; autoscale_metric: string; autoscale_target: number | null; stop_requested: boolean }>>`
      SELECT tenant_id, desired_replicas, min_replicas, max_replicas, gpus_per_replica, gpu_type, cluster_id, autoscale_metric, autoscale_target, stop_requested
        FROM endpoints WHERE id = ${id}::uuid AND deleted_at IS NULL FOR NO KEY UPDATE`;
    const cur = rows[0];
    if (!cur || (p.kind === "tenant" && cur.tenant_id !== p.tenantId)) throw notFound("Endpoint");
    if (p.kind === "agent") throw forbidden("Agents do not change endpoints");

    const desired = input.replicas ?? cur.desired_replicas;
    // a new replica count outside the old bounds moves the bound with it, unless the bound is given too
    const min = input.min_replicas ?? Math.min(cur.min_replicas, desired);
    const max = input.max_replicas ?? Math.max(cur.max_replicas, desired);
    const issues: FieldIssue[] = [];
    if (min > desired) issues.push({ path: input.min_replicas !== undefined ? "min_replicas" : "replicas", message: `min_replicas (${min}) cannot exceed replicas (${desired})` });
    if (max < desired) issues.push({ path: input.max_replicas !== undefined ? "max_replicas" : "replicas", message: `max_replicas (${max}) cannot be below replicas (${desired})` });
    const metric = input.autoscale_metric ?? cur.autoscale_metric;
    const target = input.autoscale_target !== undefined ? input.autoscale_target : metric === "none" ? null : cur.autoscale_target;
    if (metric !== "none" && target === null) issues.push({ path: "autoscale_target", message: "Required when autoscale_metric is set" });
    if (metric === "none" && input.autoscale_target != null) issues.push({ path: "autoscale_target", message: "Only with an autoscale_metric" });
    if (issues.length) throw validationFailed(issues);
    const tenant = await lockTenant(tx, cur.tenant_id);
    await assertFitsOnNodes(tx, tenant.gpu_quota, { gpu_type: cur.gpu_type, per_node: cur.gpus_per_replica, copies: min, cluster_id: cur.cluster_id });

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
        data: { endpointId: id, fromReplicas: cur.desired_replicas, toReplicas: desired, metric: "manual", outcome: desired > cur.desired_replicas ? "scale_up" : "scale_down", reason: `set by ${p.label}` },
      });
    }
    await recordAudit(tx, actor, { action: input.stopped === true ? "endpoint.stopped" : input.stopped === false ? "endpoint.started" : "endpoint.updated", targetType: "endpoint", targetId: id, tenantId: cur.tenant_id, details: { ...input } });
  });
  await reconcileEndpoints({ endpointId: id });
  return getEndpointOrThrow(p, id);
}

/** Deletes an endpoint: its replicas stop (their last segment billed) and it disappears from lists; its history stays. */
export async function deleteEndpoint(actor: Actor, id: string) {
  const e = await getEndpointOrThrow(actor.principal, id);
  await db().endpoint.update({ where: { id }, data: { stopRequested: true } });
  await reconcileEndpoints({ endpointId: id });
  await db().$transaction(async (tx) => {
    await tx.endpoint.update({ where: { id }, data: { deletedAt: new Date() } });
    await recordAudit(tx, actor, { action: "endpoint.deleted", targetType: "endpoint", targetId: id, tenantId: e.tenantId, details: { name: e.name } });
  });
  return { id, name: e.name };
}

export async function listEndpointHistory(p: Principal, id: string) {
  await getEndpointOrThrow(p, id);
  const [transitions, scaling] = await Promise.all([
    db().endpointEvent.findMany({ where: { endpointId: id }, orderBy: { id: "desc" }, take: 200 }),
    db().endpointScalingDecision.findMany({ where: { endpointId: id }, orderBy: { id: "desc" }, take: 200 }),
  ]);
  return {
    transitions: transitions.map((t) => ({ from_status: t.fromStatus, to_status: t.toStatus, reason: t.reason, actor: t.actor, created_at: t.createdAt.toISOString() })),
    scaling: scaling.map((d) => ({ from_replicas: d.fromReplicas, to_replicas: d.toReplicas, metric: d.metric, observed: d.observed, target: d.target, outcome: d.outcome, reason: d.reason, created_at: d.createdAt.toISOString() })),
  };
}

/** For operators: every live replica with its tenant, node and GPUs, busiest nodes first. */
export async function replicaHoldings() {
  const { rows } = await pool().query<{ replica_id: string; status: string; endpoint_id: string; endpoint_name: string; tenant_name: string; hostname: string; cluster_name: string; gpu_type: string; gpu_indexes: number[] }>(
    `SELECT r.id AS replica_id, r.status, e.id AS endpoint_id, e.name AS endpoint_name, t.name AS tenant_name, n.hostname, c.name AS cluster_name, r.gpu_type,
            array_agg(g.index ORDER BY g.index) AS gpu_indexes
       FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id JOIN tenants t ON t.id = r.tenant_id
       JOIN nodes n ON n.id = r.node_id JOIN clusters c ON c.id = n.cluster_id JOIN gpus g ON g.allocated_replica_id = r.id
      WHERE r.status <> 'stopped'
      GROUP BY r.id, e.id, t.name, n.hostname, c.name ORDER BY c.name, n.hostname, e.name LIMIT 2000`,
  );
  return rows;
}

/** The names of a tenant's live endpoints (what pipelines' inference steps name). */
export async function tenantEndpointNames(p: TenantPrincipal): Promise<string[]> {
  const rows = await db().endpoint.findMany({ where: { tenantId: p.tenantId, deletedAt: null }, select: { name: true }, orderBy: { name: "asc" } });
  return rows.map((r) => r.name);
}
