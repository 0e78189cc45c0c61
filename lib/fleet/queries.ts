import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { fleetScope } from "./node-access";
import { gpuSelect, nodeSelect } from "./node-schemas";

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

export async function listGpus(principal: Principal, opts: { limit: number; cursor?: string; cluster_id?: string; status?: string; gpu_type?: string }) {
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

/** The fleet KPIs of API.md's dashboard, in one query. Utilization: mean over GPUs that reported in the last 5 minutes. */
export async function fleetSummary(clusterId?: string) {
  const { rows } = await pool().query(
    `WITH g AS (
       SELECT g.id, g.status, (g.allocated_job_id IS NOT NULL OR g.allocated_replica_id IS NOT NULL) AS allocated, n.status AS node_status FROM gpus g JOIN nodes n ON n.id = g.node_id
        WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid) AND g.status <> 'missing'
     ), recent AS (
       SELECT sum(m.utilization_sum) / nullif(sum(m.samples), 0) AS util
         FROM gpu_metrics_1m m JOIN g ON g.id = m.gpu_id WHERE m.bucket >= date_trunc('minute', now()) - interval '5 minutes'
     )
     SELECT (SELECT count(*) FROM g)::int AS gpus_total,
            (SELECT count(*) FROM g WHERE status = 'unhealthy')::int AS gpus_unhealthy,
            (SELECT count(*) FROM g WHERE status = 'available' AND node_status = 'available' AND NOT allocated)::int AS gpus_schedulable,
            (SELECT count(*) FROM g WHERE allocated)::int AS gpus_allocated,
            (SELECT util FROM recent) AS utilization_avg_pct,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status <> 'offline')::int AS nodes_online,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'offline')::int AS nodes_offline,
            (SELECT count(*) FROM nodes WHERE ($1::uuid IS NULL OR cluster_id = $1::uuid) AND status = 'quarantined')::int AS nodes_quarantined`,
    [clusterId ?? null],
  );
  const r = rows[0];
  return {
    gpus_total: r.gpus_total as number,
    gpus_unhealthy: r.gpus_unhealthy as number,
    gpus_schedulable: r.gpus_schedulable as number,
    gpus_allocated: r.gpus_allocated as number,
    utilization_avg_pct: r.utilization_avg_pct === null ? null : Math.round(Number(r.utilization_avg_pct) * 10) / 10,
    nodes_online: r.nodes_online as number,
    nodes_offline: r.nodes_offline as number,
    nodes_quarantined: r.nodes_quarantined as number,
  };
}

export interface FloorGpu {
  id: string;
  index: number;
  status: string;
  util: number | null;
  temp: number | null;
}
export interface FloorNode {
  id: string;
  hostname: string;
  status: string;
  gpus: FloorGpu[];
}
export interface FloorRack {
  cluster: string;
  pod: string;
  rack: string;
  nodes: FloorNode[];
}

/** Every node and GPU grouped by pod and rack with each GPU's last-minute utilization: one query. */
export async function fleetFloor(clusterId?: string): Promise<FloorRack[]> {
  const { rows } = await pool().query<{
    node_id: string; cluster: string; hostname: string; pod: string | null; rack: string | null; node_status: string;
    gpu_id: string | null; idx: number | null; gpu_status: string | null; util: number | null; temp: number | null;
  }>(
    `WITH latest AS (
       SELECT DISTINCT ON (gpu_id) gpu_id, utilization_sum / samples AS util, temperature_max AS temp
         FROM gpu_metrics_1m WHERE bucket >= date_trunc('minute', now()) - interval '3 minutes'
        ORDER BY gpu_id, bucket DESC
     )
     SELECT n.id AS node_id, c.name AS cluster, n.hostname, n.pod, n.rack, n.status AS node_status,
            g.id AS gpu_id, g.index AS idx, g.status AS gpu_status, l.util, l.temp
       FROM nodes n
       JOIN clusters c ON c.id = n.cluster_id
       LEFT JOIN gpus g ON g.node_id = n.id AND g.status <> 'missing'
       LEFT JOIN latest l ON l.gpu_id = g.id
      WHERE ($1::uuid IS NULL OR n.cluster_id = $1::uuid)
      ORDER BY c.name, n.pod NULLS LAST, n.rack NULLS LAST, n.hostname, g.index`,
    [clusterId ?? null],
  );
  const racks = new Map<string, FloorRack>();
  const nodes = new Map<string, FloorNode>();
  for (const r of rows) {
    const key = `${r.cluster}/${r.pod ?? "—"}/${r.rack ?? "—"}`;
    let rack = racks.get(key);
    if (!rack) racks.set(key, (rack = { cluster: r.cluster, pod: r.pod ?? "unassigned", rack: r.rack ?? "unassigned", nodes: [] }));
    let node = nodes.get(r.node_id);
    if (!node) {
      node = { id: r.node_id, hostname: r.hostname, status: r.node_status, gpus: [] };
      nodes.set(r.node_id, node);
      rack.nodes.push(node);
    }
    if (r.gpu_id) node.gpus.push({ id: r.gpu_id, index: r.idx!, status: r.gpu_status!, util: r.util === null ? null : Math.round(Number(r.util)), temp: r.temp === null ? null : Number(r.temp) });
  }
  return [...racks.values()];
}

export async function clusterOverview() {
  const clusters = await db().cluster.findMany({ orderBy: { name: "asc" }, select: { id: true, name: true, region: true, provider: true } });
  const counts = await pool().query<{ cluster_id: string; nodes: number; offline: number; gpus: number; unhealthy: number }>(
    `SELECT n.cluster_id, count(DISTINCT n.id)::int AS nodes, count(DISTINCT n.id) FILTER (WHERE n.status = 'offline')::int AS offline,
            count(g.id) FILTER (WHERE g.status <> 'missing')::int AS gpus, count(g.id) FILTER (WHERE g.status = 'unhealthy')::int AS unhealthy
       FROM nodes n LEFT JOIN gpus g ON g.node_id = n.id GROUP BY 1`,
  );
  const byId = new Map(counts.rows.map((r) => [r.cluster_id, r]));
  return clusters.map((c) => ({ ...c, nodes: byId.get(c.id)?.nodes ?? 0, offline: byId.get(c.id)?.offline ?? 0, gpus: byId.get(c.id)?.gpus ?? 0, unhealthy: byId.get(c.id)?.unhealthy ?? 0 }));
}

export async function nodeDetail(nodeId: string) {
  const node = await db().node.findUnique({
    where: { id: nodeId },
    select: {
      ...nodeSelect,
      cluster: { select: { id: true, name: true } },
      gpus: { orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }], select: {
          ...gpuSelect,
          eccUncorrected: true,
          remapFailure: true,
          missingSince: true,
          // who holds each GPU: a job, or an endpoint's replica
          allocatedJob: { select: { id: true, name: true, gpuCount: true, startedAt: true, durationS: true, tenant: { select: { name: true } } } },
          allocatedReplica: { select: { id: true, status: true, endpoint: { select: { id: true, name: true, tenant: { select: { name: true } } } } } },
        },
      },
      events: { orderBy: { id: "desc" }, take: 20 },
    },
  });
  return node;
}

export async function listGpusOfNode(nodeId: string) {
  return db().gpu.findMany({ where: { nodeId }, orderBy: [{ missingSince: { sort: "asc", nulls: "first" } }, { index: "asc" }], select: gpuSelect });
}

/** Every node's hostname (by cluster, then name), for pickers. */
export async function nodeNames(limit = 2000) {
  return db().node.findMany({ orderBy: [{ clusterId: "asc" }, { hostname: "asc" }], take: limit, select: { id: true, hostname: true } });
}
