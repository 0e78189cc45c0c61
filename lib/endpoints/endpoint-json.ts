import "server-only";
import type { Prisma } from "@/lib/generated/prisma/client";
import { gatewayUrl } from "@/lib/platform/public-url";
import { oneOf } from "@/lib/vocabulary";
import { ENDPOINT_STATUSES, REPLICA_STATUSES } from "./endpoint-lifecycle";
import type { EndpointJson } from "./schemas";

const RECENT_STOPPED = 10;

// the newest replicas: every live one (at most max_replicas, 64) and the last few stopped
export const endpointInclude = {
  replicas: {
    orderBy: [{ startedAt: "desc" as const }],
    take: 64 + RECENT_STOPPED,
    include: { gpus: { select: { id: true, index: true, node: { select: { hostname: true } } }, orderBy: { index: "asc" as const } } },
  },
} satisfies Prisma.EndpointInclude;
type EndpointRow = Prisma.EndpointGetPayload<{ include: typeof endpointInclude }>;

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
    url: gatewayUrl(`/v1/endpoints/${e.id}`),
    serving_port: e.servingPort,
    health_path: e.healthPath,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
