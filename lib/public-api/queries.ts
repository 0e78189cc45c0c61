import type { z } from "zod";
import type { SqlClient } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { isOneOf } from "@/lib/vocabulary";
import type { fleetStatusSchema, publicRemediationSchema } from "./contracts";
import { PUBLIC_FLEET_NODES, PUBLIC_REMEDIATIONS } from "./statements";

// What the public listener serves besides capacity (lib/reservations/capacity-facts.ts), read
// through its SELECT-only connection from the public_api views alone.

const STATES = ["available", "registered", "draining", "maintenance", "quarantined", "offline"] as const;
type Status = z.infer<typeof fleetStatusSchema>;

export async function fleetStatus(reader: SqlClient, now = new Date()): Promise<Status> {
  const rows = await run(reader, PUBLIC_FLEET_NODES);
  const zeroStates = () => Object.fromEntries(STATES.map((s) => [s, 0])) as Status["nodes"];
  const totals = { nodes: zeroStates(), gpus: 0, gpus_healthy: 0, gpus_busy: 0 };
  const clusters = new Map<string, Status["clusters"][number]>();
  for (const r of rows) {
    let c = clusters.get(r.cluster_id);
    if (!c)
      clusters.set(
        r.cluster_id,
        (c = {
          cluster_id: r.cluster_id,
          cluster_name: r.cluster_name,
          region: r.region,
          nodes: zeroStates(),
          gpus: 0,
          gpus_healthy: 0,
          gpus_busy: 0,
          gpu_types: [],
        }),
      );
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

export async function publicRemediations(
  reader: SqlClient,
  q: { limit: number; since?: string },
): Promise<Array<z.infer<typeof publicRemediationSchema>>> {
  const rows = await run(reader, PUBLIC_REMEDIATIONS, [q.limit, q.since ?? null]);
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at.toISOString(),
    cluster_name: r.cluster_name,
    pod: r.pod,
    action: r.action,
    outcome: r.outcome,
    cause: r.cause,
  }));
}
