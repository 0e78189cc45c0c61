import "server-only";
import { alertJson } from "@/lib/alerts/alert-json";
import { listAlerts } from "@/lib/alerts/queries";
import { displayActor, resolveActors } from "@/lib/audit/actor-names";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { env } from "@/lib/env";
import { nodeGpuSeries } from "@/lib/metrics/queries";
import { bucketGrid, type TimeRange } from "@/lib/metrics/time-range";
import { oneOf } from "@/lib/vocabulary";
import { describeUnhealthyReason } from "./gpu-health-reasons";
import { gpuHealth, nodeHealth } from "./health";
import { describeNodeImpact, nodeWorkload } from "./node-impact";
import { GPU_STATUSES, NODE_STATUSES, type NodeState, OPERATOR_TARGETS, transition } from "./node-lifecycle";
import { gpuEffectiveState } from "./gpu-state";
import { nodeDetail, nodeReservations } from "./queries";
import { classifyXid } from "./xid-policy";
import { nodeHandoverView } from "@/lib/handover/node-handover-view";

/** The operator's lifecycle actions that would do something from this state (not a no-op). */
export function allowedOperatorTargets(state: NodeState) {
  return OPERATOR_TARGETS.filter((t) => {
    const r = transition(state, { kind: "operator", target: t });
    return r.ok && (r.changed || r.state.statusBeforeOffline !== state.statusBeforeOffline);
  });
}

const RETURN_STATUSES = NODE_STATUSES.filter((s) => s !== "offline");

/**
 * Everything a node's page shows, or null when there is no such node: each GPU's health (from its
 * last five minutes of temperature), the node's health, the lifecycle actions allowed from its
 * state and what each would do to the work on it, and its charts over `range`.
 */
export async function nodePageData(p: OperatorPrincipal, id: string, range: TimeRange, now = Date.now()) {
  const node = await nodeDetail(id);
  if (!node) return null;
  const reservations = await nodeReservations(id, new Date(now));
  const holding = reservations.find((r) => r.active) ?? null;
  const alerts = await listAlerts(p, { limit: 20, status: "firing", node_id: id });
  const series = await nodeGpuSeries(id, range);
  const workload = nodeWorkload(node.gpus);
  const actors = await resolveActors({ labels: node.events.map((ev) => ev.actor) });
  const e = env();
  const limits = { warningC: e.GPU_TEMP_WARNING_C, criticalC: e.GPU_TEMP_CRITICAL_C };
  const lastTemp = new Map<number, number>();
  for (const r of await nodeGpuSeries(id, { from: new Date(now - 300_000), to: new Date(now), stepS: 60 })) lastTemp.set(r.idx, r.temp);
  const gpus = node.gpus.map((g) => {
    const health = gpuHealth(
      {
        status: oneOf(GPU_STATUSES, g.status, "gpus.status"),
        temperatureC: lastTemp.get(g.index) ?? null,
        recentXids: g.lastXid !== null ? [g.lastXid] : [],
        eccUncorrected: g.eccUncorrected,
        remapFailure: g.remapFailure,
      },
      limits,
    );
    // why it is unhealthy, as the agent or the remediation said; else what lowers its score
    const why = g.unhealthyReason ? describeUnhealthyReason(g.unhealthyReason, (x) => classifyXid(x).name) : health.reasons.join("; ");
    const holder = g.allocatedJob
      ? { kind: "job" as const, name: g.allocatedJob.name, tenant: g.allocatedJob.tenant.name }
      : g.allocatedReplica
        ? { kind: "endpoint replica" as const, name: g.allocatedReplica.endpoint.name, tenant: g.allocatedReplica.endpoint.tenant.name }
        : g.allocatedPod
          ? { kind: "pod" as const, name: g.allocatedPod.name, tenant: g.allocatedPod.tenant.name }
          : null;
    const state = gpuEffectiveState({
      status: g.status,
      holder,
      nodeStatus: node.status,
      reservedFor: holding ? { tenant: holding.tenant.name, until: holding.endsAt } : null,
    });
    return { ...g, health, why, state };
  });
  const present = gpus.filter((g) => g.status !== "missing");
  const ageS = node.lastHeartbeatAt ? (now - node.lastHeartbeatAt.getTime()) / 1000 : null;
  const health = nodeHealth({
    status: node.status,
    heartbeatAgeS: ageS,
    heartbeatIntervalS: e.AGENT_HEARTBEAT_INTERVAL_S,
    gpus: present.map((g) => g.health),
  });
  const state: NodeState = {
    status: oneOf(NODE_STATUSES, node.status, "nodes.status"),
    statusBeforeOffline:
      node.statusBeforeOffline === null ? null : oneOf(RETURN_STATUSES, node.statusBeforeOffline, "nodes.status_before_offline"),
  };
  // a node owing a handover returns to service through one (the handover actions), never directly
  const allowed = allowedOperatorTargets(state).filter((t) => t !== "available" || !node.handoverDueSince);
  const handover = await nodeHandoverView(id, state, node.handoverDueSince);
  return {
    node,
    alerts: alerts.data.map((a) => alertJson(a, p)),
    series,
    grid: bucketGrid(range.from, range.to, range.stepS),
    workload,
    gpus,
    gpuCounts: {
      present: present.length,
      unhealthy: present.filter((g) => g.status === "unhealthy").length,
      missing: gpus.length - present.length,
    },
    health,
    allowed,
    impact: Object.fromEntries(allowed.map((t) => [t, describeNodeImpact(t, workload)])),
    events: node.events.map((ev) => ({ ...ev, actor: displayActor(actors.byLabel, ev.actor) })),
    reservations,
    handover,
  };
}
