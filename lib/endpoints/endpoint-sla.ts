import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { validationFailed } from "@/lib/errors";
import { combine, gatewayMinutes, type GatewayMinute } from "@/lib/gateway/gateway-figures";
import { getEndpointOrThrow } from "./get-endpoint";
import { computeSla, MINUTE_MS, servingSpans, slaTimeline, type MinuteBucket, type ObservedMinute, type SlaInput } from "./sla";

const DAY_MS = 86_400_000;
/** The longest window one report covers (the query schema says the same when both ends are given). */
const MAX_SLA_WINDOW_DAYS = 92;

/** Rollups, reconciler observations and promised spans of endpoints, as the SLA arithmetic wants them. */
export async function slaFacts(endpointIds: string[], from: Date, to: Date) {
  const [buckets, observed, events, endpoints, gateway] = await Promise.all([
    pool().query<{
      endpoint_id: string;
      bucket: Date;
      samples: number;
      unhealthy_samples: number;
      requests: string;
      errors: string;
      p95_ms: number;
    }>(
      // from the minute before the window: whether a minute follows an unobserved one decides how it counts
      `SELECT endpoint_id, bucket, samples, unhealthy_samples, requests::text, errors::text, p95_ms FROM endpoint_metrics_1m
        WHERE endpoint_id = ANY($1::uuid[]) AND bucket >= date_trunc('minute', $2::timestamptz) - interval '1 minute' AND bucket < $3`,
      [endpointIds, from, to],
    ),
    pool().query<{ endpoint_id: string; bucket: Date; min_ready: number }>(
      `SELECT endpoint_id, bucket, min_ready FROM endpoint_observations_1m
        WHERE endpoint_id = ANY($1::uuid[]) AND bucket >= date_trunc('minute', $2::timestamptz) - interval '1 minute' AND bucket < $3`,
      [endpointIds, from, to],
    ),
    db().endpointEvent.findMany({
      where: { endpointId: { in: endpointIds } },
      orderBy: { id: "asc" },
      select: { endpointId: true, createdAt: true, fromStatus: true, toStatus: true },
    }),
    db().endpoint.findMany({ where: { id: { in: endpointIds } }, select: { id: true, deletedAt: true } }),
    gatewayMinutes(endpointIds, from, to),
  ]);
  return new Map(
    endpoints.map((e) => [
      e.id,
      {
        serving: servingSpans(
          e.deletedAt?.getTime() ?? null,
          events.filter((x) => x.endpointId === e.id).map((x) => ({ at: x.createdAt.getTime(), from: x.fromStatus, to: x.toStatus })),
        ),
        buckets: withGatewayFigures(
          buckets.rows
            .filter((b) => b.endpoint_id === e.id)
            .map((b): MinuteBucket => ({
              bucket: b.bucket.getTime(),
              samples: b.samples,
              unhealthySamples: b.unhealthy_samples,
              requests: Number(b.requests),
              errors: Number(b.errors),
              p95Ms: b.p95_ms,
            })),
          gateway.get(e.id) ?? [],
        ),
        observed: observed.rows
          .filter((o) => o.endpoint_id === e.id)
          .map((o): ObservedMinute => ({ bucket: o.bucket.getTime(), minReady: o.min_ready })),
      },
    ]),
  );
}

/**
 * A minute the gateway saw is judged by what it saw (every client request, its errors and its
 * latency), whatever the serving side reported of itself; the serving side's samples count for
 * the minutes the gateway did not see.
 */
function withGatewayFigures(serving: MinuteBucket[], gateway: GatewayMinute[]): MinuteBucket[] {
  const byMinute = new Map(serving.map((b) => [b.bucket, b]));
  for (const g of gateway) {
    const f = combine([g]);
    byMinute.set(g.bucket, {
      bucket: g.bucket,
      samples: 1,
      unhealthySamples: 0,
      requests: f.requests,
      errors: f.errors,
      p95Ms: f.p95Ms ?? 0,
    });
  }
  return [...byMinute.values()].sort((a, b) => a.bucket - b.bucket);
}

/** GET /api/endpoints/{id}/sla: availability, p95 compliance and error budget over a window (default the last 24 hours). */
export async function endpointSla(p: Principal, id: string, q: { from?: string; to?: string }, now = new Date()) {
  return computeSla(await slaInput(p, id, q, now));
}

/** The SLA over a window and its minutes cut into `slots` slots (the endpoint page's figures and strip). */
export async function endpointSlaView(p: Principal, id: string, q: { from: string; to: string }, slots: number, now = new Date()) {
  const input = await slaInput(p, id, q, now);
  const stepMs = Math.max(MINUTE_MS, Math.ceil((input.to - input.from) / slots / MINUTE_MS) * MINUTE_MS);
  return { sla: computeSla(input), timeline: slaTimeline(input, stepMs), step_ms: stepMs };
}

async function slaInput(p: Principal, id: string, q: { from?: string; to?: string }, now: Date): Promise<SlaInput> {
  const e = await getEndpointOrThrow(p, id);
  const to = q.to ? new Date(q.to) : now;
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - DAY_MS);
  if (to.getTime() - from.getTime() > MAX_SLA_WINDOW_DAYS * DAY_MS) {
    throw validationFailed([{ path: q.from ? "from" : "to", message: `A window spans at most ${MAX_SLA_WINDOW_DAYS} days` }]);
  }
  const facts = (await slaFacts([id], from, to)).get(id)!;
  return {
    from: from.getTime(),
    to: to.getTime(),
    now: now.getTime(),
    ...facts,
    targets: { p95Ms: e.slaP95Ms, availabilityPct: e.slaAvailabilityPct },
  };
}
