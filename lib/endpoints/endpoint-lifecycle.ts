/**
 * An inference endpoint's status as a pure state machine.
 *
 * - provisioning: created (or started again) and no replica has been ready yet
 * - ready:        every desired replica is placed and ready
 * - scaling:      the desired count changed and the replicas are converging on it
 * - degraded:     it served before, but fewer replicas are ready than desired (a replica went
 *                 unhealthy or lost its node and is being replaced)
 * - failed:       no replica could be placed or become ready for FAILED_AFTER_S
 * - stopped:      stopped by its tenant (or deleted); holds no GPUs
 *
 * The reconciler observes the replicas and asks `nextEndpointStatus` where the endpoint should be;
 * `canTransition` is the table of moves the database is then told about (each one recorded).
 */
export const ENDPOINT_STATUSES = ["provisioning", "ready", "degraded", "scaling", "stopped", "failed"] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export const REPLICA_STATUSES = ["starting", "ready", "unhealthy", "stopped"] as const;

/** How long an endpoint may go without a ready replica (none placeable, or none turning ready) before it is failed. */
export const FAILED_AFTER_S = 600;

const ALLOWED: Record<EndpointStatus, readonly EndpointStatus[]> = {
  provisioning: ["ready", "scaling", "failed", "stopped"],
  ready: ["scaling", "degraded", "stopped"],
  scaling: ["ready", "degraded", "failed", "stopped"],
  degraded: ["ready", "scaling", "failed", "stopped"],
  failed: ["provisioning", "ready", "degraded", "stopped"],
  stopped: ["provisioning"],
};

export function canTransition(from: EndpointStatus, to: EndpointStatus): boolean {
  return ALLOWED[from].includes(to);
}

export interface EndpointObservation {
  status: EndpointStatus;
  stopRequested: boolean;
  desired: number;
  /** replicas holding GPUs (starting, ready or unhealthy) */
  live: number;
  ready: number;
  unhealthy: number;
  /** the endpoint has had a ready replica since it was (re)started */
  everReady: boolean;
  /** the desired count changed and has not been reached yet */
  scaling: boolean;
  /** when the endpoint last had no ready replica while wanting one (null: it has one) */
  withoutReadySince: number | null;
  now: number;
}

export interface StatusDecision {
  status: EndpointStatus;
  reason: string;
}

/** Where an endpoint's status should be, given what its replicas are doing. */
export function nextEndpointStatus(o: EndpointObservation): StatusDecision {
  if (o.stopRequested) return { status: "stopped", reason: "stopped on request; replicas released" };
  if (o.status === "stopped") return { status: "provisioning", reason: "started; placing replicas" };
  if (o.ready >= o.desired && o.live === o.desired) return { status: "ready", reason: `${o.ready} of ${o.desired} replicas ready` };
  const waitedS = o.withoutReadySince === null ? 0 : (o.now - o.withoutReadySince) / 1000;
  if (o.ready === 0 && waitedS >= FAILED_AFTER_S) {
    return { status: "failed", reason: o.live === 0 ? "no replica could be placed (capacity or quota)" : "no replica became ready" };
  }
  if (!o.everReady)
    return {
      status: o.status === "failed" ? "failed" : "provisioning",
      reason: `${o.live} of ${o.desired} replicas placed, ${o.ready} ready`,
    };
  if (o.scaling && o.unhealthy === 0)
    return { status: "scaling", reason: `scaling to ${o.desired} replicas: ${o.live} placed, ${o.ready} ready` };
  return { status: "degraded", reason: `${o.ready} of ${o.desired} replicas ready${o.unhealthy ? `, ${o.unhealthy} unhealthy` : ""}` };
}

/**
 * The shortest path from one status to another through allowed moves (a stopped endpoint that
 * should be ready passes through provisioning). Empty when already there.
 */
export function transitionPath(from: EndpointStatus, to: EndpointStatus): EndpointStatus[] {
  if (from === to) return [];
  const previous = new Map<EndpointStatus, EndpointStatus>([[from, from]]);
  const queue: EndpointStatus[] = [from];
  while (queue.length) {
    const at = queue.shift()!;
    for (const next of ALLOWED[at]) {
      if (previous.has(next)) continue;
      previous.set(next, at);
      if (next === to) {
        const path: EndpointStatus[] = [to];
        for (let p = at; p !== from; p = previous.get(p)!) path.unshift(p);
        return path;
      }
      queue.push(next);
    }
  }
  throw new Error(`no path from ${from} to ${to}`);
}
