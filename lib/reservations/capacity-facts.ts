import type { SqlClient } from "@/lib/db/client";
import { capacityReport, type CapacityFacts } from "./capacity";
import { capacityWindow } from "./window";

// The facts capacity is computed from, read from the public_api views (no tenant, no hostname):
// the app reads them with its own role, the public listener with one that can read nothing else.
// Every statement here must stay within those views.

export async function loadCapacityFacts(c: SqlClient, filter: { gpuType?: string; clusterId?: string } = {}): Promise<CapacityFacts> {
  const nodes = await c.query<{ node_id: string; cluster_id: string; cluster_name: string; region: string | null; pod: string | null; rack: string | null; status: string; gpu_type: string; gpus: number; healthy: number }>(
    `SELECT node_id, cluster_id, cluster_name, region, pod, rack, status, gpu_type, gpus, healthy FROM public_api.nodes
      WHERE ($1::text IS NULL OR gpu_type = $1) AND ($2::uuid IS NULL OR cluster_id = $2)`,
    [filter.gpuType ?? null, filter.clusterId ?? null],
  );
  const ids = nodes.rows.map((n) => n.node_id);
  const bookings = await c.query<{ node_id: string; starts_ms: string; ends_ms: string }>(
    `SELECT node_id, (extract(epoch FROM starts_at) * 1000)::bigint::text AS starts_ms, (extract(epoch FROM ends_at) * 1000)::bigint::text AS ends_ms
       FROM public_api.node_bookings WHERE node_id = ANY($1::uuid[])`,
    [ids],
  );
  const work = await c.query<{ node_id: string; until_ms: string | null; gpus: number }>(
    `SELECT node_id, (extract(epoch FROM busy_until) * 1000)::bigint::text AS until_ms, gpus FROM public_api.node_work WHERE node_id = ANY($1::uuid[])`,
    [ids],
  );
  return {
    nodes: nodes.rows.map((n) => ({ nodeId: n.node_id, clusterId: n.cluster_id, clusterName: n.cluster_name, region: n.region, pod: n.pod, rack: n.rack, status: n.status, gpuType: n.gpu_type, gpus: n.gpus, healthy: n.healthy })),
    bookings: bookings.rows.map((b) => ({ nodeId: b.node_id, startsAt: Number(b.starts_ms), endsAt: Number(b.ends_ms) })),
    work: work.rows.map((w) => ({ nodeId: w.node_id, gpus: w.gpus, until: w.until_ms === null ? null : Number(w.until_ms) })),
  };
}

/** What is free for the window a capacity query asks for (GET /api/capacity and the public /v1/capacity). */
export async function capacityFor(c: SqlClient, q: { gpu_type?: string; cluster_id?: string; from?: string; to?: string }, now = Date.now()) {
  const facts = await loadCapacityFacts(c, { gpuType: q.gpu_type, clusterId: q.cluster_id });
  return capacityReport(facts, capacityWindow(q, now), { gpuType: q.gpu_type, clusterId: q.cluster_id });
}
