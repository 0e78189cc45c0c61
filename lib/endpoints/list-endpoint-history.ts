import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { getEndpointOrThrow } from "./get-endpoint";

export async function listEndpointHistory(p: Principal, id: string) {
  await getEndpointOrThrow(p, id);
  const [transitions, scaling] = await Promise.all([
    db().endpointEvent.findMany({ where: { endpointId: id }, orderBy: { id: "desc" }, take: 200 }),
    db().endpointScalingDecision.findMany({ where: { endpointId: id }, orderBy: { id: "desc" }, take: 200 }),
  ]);
  return {
    transitions: transitions.map((t) => ({
      from_status: t.fromStatus,
      to_status: t.toStatus,
      reason: t.reason,
      actor: t.actor,
      created_at: t.createdAt.toISOString(),
    })),
    scaling: scaling.map((d) => ({
      from_replicas: d.fromReplicas,
      to_replicas: d.toReplicas,
      metric: d.metric,
      observed: d.observed,
      target: d.target,
      outcome: d.outcome,
      reason: d.reason,
      created_at: d.createdAt.toISOString(),
    })),
  };
}
