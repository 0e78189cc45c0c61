import "server-only";
import type { Actor, Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { env } from "@/lib/env";
import { notFound, staleReport, validationFailed } from "@/lib/errors";
import { combine, gatewayMinutes, type GatewayMinute } from "@/lib/gateway/gateway-figures";
import { bucketGrid, stepFor } from "@/lib/metrics/time-range";
import { inTransaction } from "@/lib/db/transaction";
import { getEndpointOrThrow } from "./get-endpoint";
import type { EndpointSample } from "./schemas";

const FUTURE_SLACK_MS = 5 * 60_000;

/**
 * Who may post samples for an endpoint, and for which replicas: a tenant its own endpoints', an
 * operator any; an agent only for replicas on its cluster's nodes (its node, for a node-bound key),
 * naming each replica's placement by its fence; a serving container's report token only for its
 * own replica.
 */
type Reporter =
  | { kind: "any" }
  | { kind: "agent"; replicas: Map<string, { fence: string; live: boolean; inScope: boolean }> }
  | { kind: "workload"; replicaId: string };

async function reporterFor(p: Principal, id: string): Promise<Reporter> {
  if (p.kind === "workload") {
    if (p.placement !== "replica" || p.endpointId !== id) throw notFound("Endpoint");
    return { kind: "workload", replicaId: p.replicaId };
  }
  if (p.kind !== "agent") {
    await getEndpointOrThrow(p, id);
    return { kind: "any" };
  }
  const { rows } = await pool().query<{ id: string; fence: string; live: boolean; in_scope: boolean }>(
    `SELECT r.id, r.fence::text AS fence, r.status <> 'stopped' AS live,
            (n.cluster_id = $2 AND ($3::uuid IS NULL OR n.id = $3::uuid)) AS in_scope
       FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id LEFT JOIN nodes n ON n.id = r.node_id
      WHERE r.endpoint_id = $1 AND e.deleted_at IS NULL`,
    [id, p.clusterId, p.nodeId ?? null],
  );
  // an endpoint this agent never served is not its business
  if (!rows.some((r) => r.in_scope)) throw notFound("Endpoint");
  return { kind: "agent", replicas: new Map(rows.map((r) => [r.id, { fence: r.fence, live: r.live, inScope: r.in_scope }])) };
}

/**
 * Stores serving samples (each (replica, recorded_at) once), refreshes the per-minute rollups of the
 * minutes they touch from the raw rows (exact, and idempotent under re-sends), and applies what they
 * say of each replica's health: a healthy sample makes a starting or unhealthy replica ready, an
 * unhealthy one marks it unhealthy at once. Samples that cannot be stored are reported by index.
 */
export async function ingestEndpointMetrics(actor: Actor, endpointId: string, samples: EndpointSample[], now = new Date()) {
  const reporter = await reporterFor(actor.principal, endpointId);
  const { rows: known } = await pool().query<{ id: string }>(`SELECT id FROM endpoint_replicas WHERE endpoint_id = $1`, [endpointId]);
  const replicaIds = new Set(known.map((r) => r.id));
  const oldest = now.getTime() - env().METRICS_RAW_RETENTION_HOURS * 3_600_000;
  const rejected: Array<{ index: number; error: string }> = [];
  const accepted: Array<EndpointSample & { at: Date }> = [];
  const missingFence: number[] = [];
  let stale = false;
  samples.forEach((raw, index) => {
    const s = reporter.kind === "workload" && !raw.replica_id ? { ...raw, replica_id: reporter.replicaId } : raw;
    const at = s.recorded_at ? new Date(s.recorded_at) : now;
    if (at.getTime() > now.getTime() + FUTURE_SLACK_MS) return rejected.push({ index, error: "recorded_at is in the future" });
    if (at.getTime() < oldest) return rejected.push({ index, error: "recorded_at is older than the raw retention" });
    if (s.replica_id && !replicaIds.has(s.replica_id))
      return rejected.push({ index, error: "replica_id is not a replica of this endpoint" });
    if (reporter.kind === "workload" && s.replica_id !== reporter.replicaId)
      return rejected.push({ index, error: "a report token reports only for its own replica" });
    // the control plane calls this address (inference steps): only the node's agent, infrastructure
    // rather than tenant code, may say where a replica serves, or a tenant could aim those calls at
    // any address the control plane can reach
    if (s.serving_url && reporter.kind !== "agent")
      return rejected.push({ index, error: "only the node's agent reports a replica's serving_url" });
    if (reporter.kind === "agent") {
      const r = s.replica_id ? reporter.replicas.get(s.replica_id) : undefined;
      if (!r || !r.inScope) return rejected.push({ index, error: "an agent reports only for replicas on its own nodes" });
      if (!s.fence) return missingFence.push(index);
      if (!r.live || r.fence !== s.fence) stale = true;
    }
    accepted.push({ ...s, at });
  });
  if (missingFence.length)
    throw validationFailed(
      missingFence.map((i) => ({
        path: `body.samples[${i}].fence`,
        message: "Agents name the replica's placement: its assignment's fence",
      })),
    );
  if (stale) throw staleReport("A sample is about a replica placement that is no longer current; nothing was stored");
  if (accepted.length === 0) return { accepted: 0, rejected };

  return inTransaction(async (c) => {
    if (reporter.kind === "agent") {
      // the fences again, under lock, in the transaction that applies the samples: a replica stopped
      // or replaced since the read above makes the whole report stale
      const pairs = [...new Map(accepted.map((s) => [s.replica_id!, s.fence!])).entries()];
      const current = await c.query(
        `SELECT r.id FROM endpoint_replicas r JOIN unnest($1::uuid[], $2::uuid[]) AS x(id, fence) ON r.id = x.id AND r.fence = x.fence
          WHERE r.status <> 'stopped' FOR UPDATE OF r`,
        [pairs.map((x) => x[0]), pairs.map((x) => x[1])],
      );
      if (current.rowCount !== pairs.length)
        throw staleReport("A sample is about a replica placement that is no longer current; nothing was stored");
    }
    const inserted = await c.query<{ replica_id: string | null; recorded_at: Date; healthy: boolean }>(
      `INSERT INTO endpoint_metrics (endpoint_id, replica_id, recorded_at, requests, errors, p50_ms, p95_ms, p99_ms, tokens_per_s, healthy)
       SELECT $1, * FROM unnest($2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::real[], $7::real[], $8::real[], $9::real[], $10::boolean[])
       ON CONFLICT (endpoint_id, (COALESCE(replica_id, '00000000-0000-0000-0000-000000000000'::uuid)), recorded_at) DO NOTHING
       RETURNING replica_id, recorded_at, healthy`,
      [
        endpointId,
        accepted.map((s) => s.replica_id ?? null),
        accepted.map((s) => s.at),
        accepted.map((s) => s.requests),
        accepted.map((s) => s.errors),
        accepted.map((s) => s.p50_ms),
        accepted.map((s) => s.p95_ms),
        accepted.map((s) => s.p99_ms),
        accepted.map((s) => s.tokens_per_s ?? null),
        accepted.map((s) => s.healthy),
      ],
    );
    // where replicas serve, as their serving side says (inference steps call it)
    const addresses = [
      ...new Map(accepted.filter((s) => s.replica_id && s.serving_url).map((s) => [s.replica_id!, s.serving_url!])).entries(),
    ];
    if (addresses.length) {
      await c.query(
        `UPDATE endpoint_replicas r SET serving_url = x.url FROM unnest($1::uuid[], $2::text[]) AS x(id, url) WHERE r.id = x.id AND r.endpoint_id = $3 AND r.serving_url IS DISTINCT FROM x.url`,
        [addresses.map((a) => a[0]), addresses.map((a) => a[1]), endpointId],
      );
    }
    if (inserted.rows.length) {
      await refreshRollups(
        c,
        endpointId,
        inserted.rows.map((r) => r.recorded_at),
      );
      await applyReplicaHealth(c, endpointId, [...new Set(inserted.rows.flatMap((r) => (r.replica_id ? [r.replica_id] : [])))]);
    }
    return { accepted: accepted.length, rejected };
  });
}

/**
 * Recomputes the minutes touched from the raw rows. Latency percentiles of a minute are the
 * request-weighted means of the samples' (p95_max_ms keeps the worst); tokens/s is the sum over
 * replicas of each one's mean.
 */
async function refreshRollups(c: import("pg").PoolClient, endpointId: string, times: Date[]) {
  await c.query(
    `WITH buckets AS (SELECT DISTINCT date_trunc('minute', t) AS b FROM unnest($2::timestamptz[]) t),
     per_replica AS (
       SELECT date_trunc('minute', m.recorded_at) AS b, m.replica_id, count(*) AS n, count(*) FILTER (WHERE NOT m.healthy) AS bad,
              sum(m.requests) AS req, sum(m.errors) AS err, sum(GREATEST(m.requests, 1)) AS w,
              sum(m.p50_ms * GREATEST(m.requests, 1)) AS p50w, sum(m.p95_ms * GREATEST(m.requests, 1)) AS p95w,
              max(m.p95_ms) AS p95max, sum(m.p99_ms * GREATEST(m.requests, 1)) AS p99w, avg(m.tokens_per_s) AS tok
         FROM endpoint_metrics m JOIN buckets ON m.recorded_at >= buckets.b AND m.recorded_at < buckets.b + interval '1 minute'
        WHERE m.endpoint_id = $1
        GROUP BY 1, 2
     )
     INSERT INTO endpoint_metrics_1m (endpoint_id, bucket, samples, replicas_reporting, unhealthy_samples, requests, errors, p50_ms, p95_ms, p95_max_ms, p99_ms, tokens_per_s)
     SELECT $1, b, sum(n), count(replica_id), sum(bad), sum(req), sum(err), sum(p50w) / sum(w), sum(p95w) / sum(w), max(p95max), sum(p99w) / sum(w), sum(tok)
       FROM per_replica GROUP BY b
     ON CONFLICT (endpoint_id, bucket) DO UPDATE SET samples = excluded.samples, replicas_reporting = excluded.replicas_reporting,
        unhealthy_samples = excluded.unhealthy_samples, requests = excluded.requests, errors = excluded.errors, p50_ms = excluded.p50_ms,
        p95_ms = excluded.p95_ms, p95_max_ms = excluded.p95_max_ms, p99_ms = excluded.p99_ms, tokens_per_s = excluded.tokens_per_s`,
    [endpointId, times],
  );
}

/** Each live replica that just reported takes the health its newest sample reports (newer than what it last heard). */
async function applyReplicaHealth(c: import("pg").PoolClient, endpointId: string, replicaIds: string[]) {
  if (replicaIds.length === 0) return;
  await c.query(
    `WITH latest AS (
       SELECT DISTINCT ON (replica_id) replica_id, recorded_at, healthy FROM endpoint_metrics
        WHERE endpoint_id = $1 AND replica_id = ANY($2::uuid[])
        ORDER BY replica_id, recorded_at DESC
     )
     UPDATE endpoint_replicas r SET
        last_sample_at = GREATEST(r.last_sample_at, l.recorded_at),
        status = CASE WHEN l.healthy AND r.probe_failing_since IS NULL THEN 'ready' ELSE 'unhealthy' END,
        ready_at = CASE WHEN l.healthy AND r.probe_failing_since IS NULL THEN COALESCE(r.ready_at, now()) ELSE r.ready_at END,
        unhealthy_since = CASE WHEN l.healthy AND r.probe_failing_since IS NULL THEN NULL ELSE COALESCE(r.unhealthy_since, now()) END,
        health_reason = CASE WHEN l.healthy AND r.probe_failing_since IS NULL THEN NULL ELSE COALESCE(r.health_reason, 'health check failing') END
       FROM latest l
      WHERE r.id = l.replica_id AND r.status <> 'stopped'
        AND (r.last_sample_at IS NULL OR l.recorded_at >= r.last_sample_at)
        -- a replica the gateway's probes find failing stays unhealthy whatever its serving side says
        AND (r.last_sample_at IS DISTINCT FROM GREATEST(r.last_sample_at, l.recorded_at)
             OR r.status <> CASE WHEN l.healthy AND r.probe_failing_since IS NULL THEN 'ready' ELSE 'unhealthy' END)`,
    [endpointId, replicaIds],
  );
}

/**
 * Series for charts: throughput, error rate, latency percentiles, tokens/s per step (default: per
 * minute over the last hour; longer windows take longer steps, see stepFor). Latency of a step is
 * the request-weighted mean of its minutes; every step of the window is present, null where no
 * sample arrived, so a chart shows the gap.
 */
export async function endpointSeries(p: Principal, endpointId: string, q: { from?: string; to?: string }, now = new Date()) {
  await getEndpointOrThrow(p, endpointId);
  const to = q.to ? new Date(q.to) : now;
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - 3_600_000);
  const stepS = stepFor((to.getTime() - from.getTime()) / 1000);
  const { rows } = await pool().query<{
    t: Date;
    requests: string;
    errors: string;
    p50_ms: number;
    p95_ms: number;
    p99_ms: number;
    tokens_per_s: number | null;
    replicas_reporting: number;
  }>(
    `SELECT date_bin(make_interval(secs => $4), bucket, 'epoch'::timestamptz) AS t, sum(requests)::text AS requests, sum(errors)::text AS errors,
            sum(p50_ms * GREATEST(requests, 1)) / sum(GREATEST(requests, 1)) AS p50_ms, sum(p95_ms * GREATEST(requests, 1)) / sum(GREATEST(requests, 1)) AS p95_ms,
            sum(p99_ms * GREATEST(requests, 1)) / sum(GREATEST(requests, 1)) AS p99_ms, avg(tokens_per_s) AS tokens_per_s, max(replicas_reporting) AS replicas_reporting
       FROM endpoint_metrics_1m
      WHERE endpoint_id = $1 AND bucket >= date_bin(make_interval(secs => $4), $2::timestamptz, 'epoch'::timestamptz) AND bucket < $3
      GROUP BY 1 ORDER BY 1`,
    [endpointId, from, to, stepS],
  );
  const byT = new Map(rows.map((r) => [r.t.getTime(), r]));
  // where the gateway saw a step, its figures stand for the step's traffic (lib/gateway/gateway-figures.ts)
  const seen = new Map<number, GatewayMinute[]>();
  for (const m of (await gatewayMinutes([endpointId], from, to)).get(endpointId) ?? []) {
    if (m.bucket < from.getTime() - stepS * 1000) continue;
    const t = Math.floor(m.bucket / (stepS * 1000)) * stepS * 1000;
    seen.set(t, [...(seen.get(t) ?? []), m]);
  }
  return {
    step: describeStepShort(stepS),
    step_s: stepS,
    from: from.toISOString(),
    to: to.toISOString(),
    points: bucketGrid(from, to, stepS).map((t) => {
      const g = seen.has(t) ? combine(seen.get(t)!) : null;
      const r = g
        ? { requests: String(g.requests), errors: String(g.errors), p50_ms: g.p50Ms ?? 0, p95_ms: g.p95Ms ?? 0, p99_ms: g.p99Ms ?? 0 }
        : byT.get(t);
      const serving = byT.get(t);
      const minutes = stepS / 60;
      return {
        t: new Date(t).toISOString(),
        requests_per_s: r ? Math.round((Number(r.requests) / 60 / minutes) * 100) / 100 : null,
        error_rate_pct: r && Number(r.requests) > 0 ? Math.round((10_000 * Number(r.errors)) / Number(r.requests)) / 100 : null,
        p50_ms: r ? Math.round(r.p50_ms) : null,
        p95_ms: r ? Math.round(r.p95_ms) : null,
        p99_ms: r ? Math.round(r.p99_ms) : null,
        tokens_per_s: serving && serving.tokens_per_s !== null ? Math.round(serving.tokens_per_s) : null,
        replicas_reporting: serving ? serving.replicas_reporting : 0,
      };
    }),
  };
}

const describeStepShort = (stepS: number) =>
  stepS % 86_400 === 0 ? `${stepS / 86_400}d` : stepS % 3_600 === 0 ? `${stepS / 3_600}h` : `${stepS / 60}m`;
