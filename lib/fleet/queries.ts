import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { fleetScope } from "./node-access";
import { gpuSelect, nodeSelect } from "./node-schemas";
import { CLUSTER_COUNTS, FLEET_FLOOR, FLEET_SUMMARY } from "./statements";

export async function getNodeOrThrow(principal: Principal, id: string) {
  const scope = fleetScope(principal);
  // a node-bound key sees its own node only
  if (scope.nodeId && scope.nodeId !== id) throw notFound("Node");
  const node = await db().node.findFirst({ where: { id, ...(scope.clusterId ? { clusterId: scope.clusterId } : {}) }, select: nodeSelect });
  if (!node) throw notFound("Node");
  return node;
}

export async function getGpuOrThrow(principal: Principal, id: string) {
  const scope = fleetScope(principal);
  const gpu = await db().gpu.findFirst({
    where: { id, ...(scope.clusterId ? { node: { clusterId: scope.clusterId } } : {}), ...(scope.nodeId ? { nodeId: scope.nodeId } : {}) },
    select: gpuSelect,
  });
  if (!gpu) throw notFound("GPU");
  return gpu;
}

export async function listNodes(principal: Principal, opts: { limit: number; cursor?: string; cluster_id?: string; status?: string }) {
  const scope = fleetScope(principal);
  const rows = await db().node.findMany({
    where: {
      ...(scope.clusterId ? { clusterId: scope.clusterId } : opts.cluster_id ? { clusterId: opts.cluster_id } : {}),
      ...(scope.nodeId ? { id: scope.nodeId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: nodeSelect,
  });
  return page(rows, opts.limit);
}

export async function listGpus(
  principal: Principal,
  opts: { limit: number; cursor?: string; cluster_id?: string; status?: string; gpu_type?: string },
) {
  const scope = fleetScope(principal);
  const clusterId = scope.clusterId ?? opts.cluster_id;
  const rows = await db().gpu.findMany({
    where: {
      ...(clusterId ? { node: { clusterId } } : {}),
      ...(scope.nodeId ? { nodeId: scope.nodeId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.gpu_type ? { gpuType: opts.gpu_type } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: { ...gpuSelect, createdAt: true },
  });
  return page(rows, opts.limit);
}

/** The fleet KPIs of API.md's dashboard, in one query (FLEET_SUMMARY). */
export async function fleetSummary(clusterId?: string) {
  const [r] = await run(pool(), FLEET_SUMMARY, [clusterId ?? null]);
  return { ...r!, utilization_avg_pct: r!.utilization_avg_pct === null ? null : Math.round(r!.utilization_avg_pct * 10) / 10 };
}

interface FloorGpu {
  id: string;
  index: number;
  status: string;
  util: number | null;
  temp: number | null;
  /** held by a job or an endpoint's replica */
  allocated: boolean;
}
export interface FloorNode {
  id: string;
  hostname: string;
  status: string;
  /** the tenant whose reservation holds the node now */
  reservedBy: string | null;
  gpus: FloorGpu[];
}
export interface FloorRack {
  cluster: string;
  clusterId: string;
  /** null: nodes registered without a pod or rack */
  podName: string | null;
  rackName: string | null;
  pod: string;
  rack: string;
  nodes: FloorNode[];
}

/**
 * Every node and GPU grouped by pod and rack with each GPU's last-minute utilization, its
 * allocation and the reservation holding its node: one query. `rack` narrows it to one rack of the
 * cluster (null names the nodes registered without one).
 */
export async function fleetFloor(clusterId?: string, rack?: { pod: string | null; rack: string | null }): Promise<FloorRack[]> {
  const rows = await run(pool(), FLEET_FLOOR, [clusterId ?? null, rack !== undefined, rack?.pod ?? null, rack?.rack ?? null]);
  const racks = new Map<string, FloorRack>();
  const nodes = new Map<string, FloorNode>();
  for (const r of rows) {
    const key = `${r.cluster_id}/${r.pod ?? "—"}/${r.rack ?? "—"}`;
    let rack = racks.get(key);
    if (!rack) {
      rack = {
        cluster: r.cluster,
        clusterId: r.cluster_id,
        podName: r.pod,
        rackName: r.rack,
        pod: r.pod ?? "unassigned",
        rack: r.rack ?? "unassigned",
        nodes: [],
      };
      racks.set(key, rack);
    }
    let node = nodes.get(r.node_id);
    if (!node) {
      node = { id: r.node_id, hostname: r.hostname, status: r.node_status, reservedBy: r.reserved_by, gpus: [] };
      nodes.set(r.node_id, node);
      rack.nodes.push(node);
    }
    if (r.gpu_id) {
      node.gpus.push({
        id: r.gpu_id,
        index: r.idx!,
        status: r.gpu_status!,
        allocated: r.allocated === true,
        util: r.util === null ? null : Math.round(r.util),
        temp: r.temp,
      });
    }
  }
  return [...racks.values()];
}

export async function clusterOverview() {
  const clusters = await db().cluster.findMany({
    orderBy: { name: "asc" },
    select: { id: true, name: true, region: true, provider: true, kind: true },
  });
  const counts = await run(pool(), CLUSTER_COUNTS);
  const byId = new Map(counts.map((r) => [r.cluster_id, r]));
  return clusters.map((c) => ({
    ...c,
    nodes: byId.get(c.id)?.nodes ?? 0,
    offline: byId.get(c.id)?.offline ?? 0,
    gpus: byId.get(c.id)?.gpus ?? 0,
    unhealthy: byId.get(c.id)?.unhealthy ?? 0,
  }));
}

export async function nodeDetail(nodeId: string) {
  const node = await db().node.findUnique({
    where: { id: nodeId },
    select: {
      ...nodeSelect,
      handoverDueSince: true,
      cluster: { select: { id: true, name: true } },
      gpus: {
        orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }],
        select: {
          ...gpuSelect,
          eccUncorrected: true,
          remapFailure: true,
          missingSince: true,
          // who holds each GPU: a job, or an endpoint's replica
          allocatedJob: {
            select: { id: true, name: true, gpuCount: true, startedAt: true, durationS: true, tenant: { select: { name: true } } },
          },
          allocatedReplica: {
            select: { id: true, status: true, endpoint: { select: { id: true, name: true, tenant: { select: { name: true } } } } },
          },
          allocatedPod: { select: { id: true, name: true, tenant: { select: { name: true } } } },
        },
      },
      events: { orderBy: { id: "desc" }, take: 20 },
    },
  });
  return node;
}

/** When the fleet (or one cluster) began reporting: its first node's registration; null without nodes. What a chart's default range fits. */
export async function fleetSince(clusterId?: string): Promise<Date | null> {
  const r = await db().node.aggregate({ where: clusterId ? { clusterId } : {}, _min: { createdAt: true } });
  return r._min.createdAt;
}

/** The reservations that hold the node now or will (live holdings not yet over), soonest first, with their tenant. */
export async function nodeReservations(nodeId: string, now = new Date()) {
  const rows = await db().reservationNode.findMany({
    where: { nodeId, live: true, closedAt: null, endsAt: { gt: now } },
    orderBy: { startsAt: "asc" },
    take: 10,
    select: {
      startsAt: true,
      endsAt: true,
      gpuCount: true,
      reservation: { select: { id: true, status: true, gpuType: true, nodeCount: true, tenant: { select: { id: true, name: true } } } },
    },
  });
  return rows.map((r) => ({
    reservationId: r.reservation.id,
    tenant: r.reservation.tenant,
    status: r.reservation.status,
    nodeCount: r.reservation.nodeCount,
    startsAt: r.startsAt,
    endsAt: r.endsAt,
    active: r.startsAt <= now,
  }));
}

export async function listGpusOfNode(nodeId: string) {
  return db().gpu.findMany({
    where: { nodeId },
    orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }],
    select: gpuSelect,
  });
}

/** Every node's hostname (by cluster, then name), for pickers. */
export async function nodeNames(limit = 2000) {
  return db().node.findMany({ orderBy: [{ clusterId: "asc" }, { hostname: "asc" }], take: limit, select: { id: true, hostname: true } });
}
