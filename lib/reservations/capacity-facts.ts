import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { capacityReport, type CapacityFacts } from "./capacity";
import { CAPACITY_BOOKINGS, CAPACITY_NODES, CAPACITY_WORK } from "./statements";
import { capacityWindow } from "./window";

// The facts capacity is computed from, read from the public_api views (no tenant, no hostname):
// the app reads them with its own role, the public listener with one that can read nothing else.
// Every statement here (CAPACITY_* in ./statements) must stay within those views.

export async function loadCapacityFacts(c: SqlClient, filter: { gpuType?: string; clusterId?: string } = {}): Promise<CapacityFacts> {
  const nodes = await run(c, CAPACITY_NODES, [filter.gpuType ?? null, filter.clusterId ?? null]);
  const ids = nodes.map((n) => n.node_id);
  const bookings = await run(c, CAPACITY_BOOKINGS, [ids]);
  const work = await run(c, CAPACITY_WORK, [ids]);
  return {
    nodes: nodes.map((n) => ({
      nodeId: n.node_id,
      clusterId: n.cluster_id,
      clusterName: n.cluster_name,
      region: n.region,
      pod: n.pod,
      rack: n.rack,
      status: n.status,
      gpuType: n.gpu_type,
      gpus: n.gpus,
      healthy: n.healthy,
    })),
    bookings: bookings.map((b) => ({ nodeId: b.node_id, startsAt: Number(b.starts_ms), endsAt: Number(b.ends_ms) })),
    work: work.map((w) => ({ nodeId: w.node_id, gpus: w.gpus, until: w.until_ms === null ? null : Number(w.until_ms) })),
  };
}

/** What is free for the window a capacity query asks for (GET /api/capacity and the public /v1/capacity). */
export async function capacityFor(
  c: SqlClient,
  q: { gpu_type?: string; cluster_id?: string; from?: string; to?: string },
  now = Date.now(),
) {
  const facts = await loadCapacityFacts(c, { gpuType: q.gpu_type, clusterId: q.cluster_id });
  return capacityReport(facts, capacityWindow(q, now), { gpuType: q.gpu_type, clusterId: q.cluster_id });
}
