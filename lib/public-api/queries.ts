import type { z } from "zod";
import type { SqlClient } from "@/lib/db/client";
import { isOneOf } from "@/lib/vocabulary";
import type { fleetStatusSchema, publicRemediationSchema } from "./contracts";

// What the public listener serves besides capacity (lib/reservations/capacity-facts.ts), read
// through its SELECT-only connection from the public_api views alone.

const STATES = ["available", "registered", "draining", "maintenance", "quarantined", "offline"] as const;
type Status = z.infer<typeof fleetStatusSchema>;

export async function fleetStatus(reader: SqlClient, now = new Date()): Promise<Status> {
  const { rows } = await reader.query<{ cluster_id: string; cluster_name: string; region: string | null; status: string; gpu_type: string; gpus: number; healthy: number; busy: number }>(
    `SELECT n.cluster_id, n.cluster_name, n.region, n.status, n.gpu_type, n.gpus, n.healthy, COALESCE(w.busy, 0)::int AS busy
       FROM public_api.nodes n LEFT JOIN (SELECT node_id, sum(gpus) AS busy FROM public_api.node_work GROUP BY node_id) w ON w.node_id = n.node_id
      ORDER BY n.cluster_name`,
  );
  const zeroStates = () => Object.fromEntries(STATES.map((s) => [s, 0])) as Status["nodes"];
  const totals = { nodes: zeroStates(), gpus: 0, gpus_healthy: 0, gpus_busy: 0 };
  const clusters = new Map<string, Status["clusters"][number]>();
  for (const r of rows) {
    let c = clusters.get(r.cluster_id);
    if (!c) clusters.set(r.cluster_id, (c = { cluster_id: r.cluster_id, cluster_name: r.cluster_name, region: r.region, nodes: zeroStates(), gpus: 0, gpus_healthy: 0, gpus_busy: 0, gpu_types: [] }));
    const state = isOneOf(STATES, r.status) ? r.status : "offline";
    let t = c.gpu_types.find((x) => x.gpu_type === r.gpu_type);
    if (!t) c.gpu_types.push((t = { gpu_type: r.gpu_type, gpus: 0, gpus_healthy: 0, gpus_busy: 0 }));
    for (const f of [totals, c]) f.nodes[state] += 1;
    for (const f of [totals, c, t]) {
      f.gpus += r.gpus;
      f.gpus_healthy += r.healthy;
      f.gpus_busy += r.busy;
    }
  }
  return {
    generated_at: now.toISOString(),
    status: totals.nodes.quarantined + totals.nodes.offline > 0 ? "degraded" : "operational",
    ...totals,
    clusters: [...clusters.values()],
  };
}

export async function publicRemediations(reader: SqlClient, q: { limit: number; since?: string }): Promise<Array<z.infer<typeof publicRemediationSchema>>> {
  const { rows } = await reader.query<{ id: string; created_at: Date; cluster_name: string; pod: string | null; action: string; outcome: string; cause: string }>(
    `SELECT id::text, created_at, cluster_name, pod, action, outcome, cause FROM public_api.remediations
      WHERE ($2::timestamptz IS NULL OR created_at >= $2) ORDER BY created_at DESC LIMIT $1`,
    [q.limit, q.since ?? null],
  );
  return rows.map((r) => ({ id: r.id, at: r.created_at.toISOString(), cluster_name: r.cluster_name, pod: r.pod, action: r.action, outcome: r.outcome, cause: r.cause }));
}
