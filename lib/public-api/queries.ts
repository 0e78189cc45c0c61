import type { z } from "zod";
import type { SqlClient } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import type { Jwks } from "@/lib/attestation/verdict-jws";
import { isOneOf } from "@/lib/vocabulary";
import type { fleetStatusSchema, publicRemediationSchema } from "./contracts";
import { PUBLIC_ATTESTATION_KEYS, PUBLIC_FLEET_NODES, PUBLIC_LATEST_ATTESTATION, PUBLIC_REMEDIATIONS } from "./statements";

// What the public listener serves besides capacity (lib/reservations/capacity-facts.ts), read
// through its SELECT-only connection from the public_api views alone.

const STATES = [
  "available",
  "registered",
  "draining",
  "maintenance",
  "quarantined",
  "offline",
  "provisioning",
  "releasing",
  "wiping",
  "inspecting",
  "attestation_failed",
] as const;
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

/** A node's latest verdict (a JWS anyone can check), or null when it has none. */
export async function publicNodeAttestation(reader: SqlClient, nodeId: string) {
  const row = await runOne(reader, PUBLIC_LATEST_ATTESTATION, [nodeId]);
  if (!row) return null;
  return {
    id: row.id,
    node_id: row.node_id,
    result: row.result === "pass" ? ("pass" as const) : ("fail" as const),
    policy: row.policy_name,
    policy_version: row.policy_version,
    kid: row.kid,
    created_at: row.created_at.toISOString(),
    jws: row.jws,
  };
}

/** Every key that ever signed a verdict. */
export async function publicAttestationKeys(reader: SqlClient): Promise<Jwks> {
  return { keys: (await run(reader, PUBLIC_ATTESTATION_KEYS)).map((r) => r.public_jwk as unknown as Jwks["keys"][number]) };
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
