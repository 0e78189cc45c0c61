import "server-only";
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { emitEvent } from "@/lib/background/emit";
import type { SqlClient } from "@/lib/db/client";
import { columnSet } from "@/lib/db/column-set";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { combine, gatewayMinutes } from "@/lib/gateway/gateway-figures";
import { lockFreeGpus, readNodeBookings, readTenantQuotas } from "@/lib/scheduler/capacity-queries";
import { groupFreeNodes } from "@/lib/scheduler/free-nodes";
import { decideScale, type AutoscaleMetric } from "./autoscaler";
import { nextEndpointStatus, transitionPath, type EndpointStatus } from "./endpoint-lifecycle";
import { REPLACE_UNHEALTHY_AFTER_S, STALE_AFTER_S, START_TIMEOUT_S } from "./replica-health";
import { placeReplicas, type FreeNode } from "./replica-placement";

// the rows a pass writes, one array per column (lib/db/column-set.ts)
const STOPS = columnSet({ id: "uuid[]", reason: "text[]" });
/** in endpoint_replicas' column order: the INSERT takes them by position */
const NEW_REPLICAS = columnSet({
  id: "uuid[]",
  endpoint_id: "uuid[]",
  tenant_id: "uuid[]",
  node_id: "uuid[]",
  gpu_type: "text[]",
  gpu_count: "int[]",
  reservation_id: "uuid[]",
});
const GPU_REPLICAS = columnSet({ gpu_id: "uuid[]", replica_id: "uuid[]" });
const STATUS_CHANGES = columnSet({
  id: "uuid[]",
  status: "text[]",
  reason: "text[]",
  ever_ready: "boolean[]",
  without_ready_since: "timestamptz[]",
  clear_scaling: "boolean[]",
  status_changed: "boolean[]",
});
const STATUS_EVENTS = columnSet({ id: "uuid[]", from_status: "text[]", to_status: "text[]", reason: "text[]" }, { ordinality: "ord" });
const OBSERVATIONS = columnSet({ id: "uuid[]", ready: "int[]", desired: "int[]" });

interface EndpointRow {
  id: string;
  tenant_id: string;
  gpu_type: string;
  gpus_per_replica: number;
  cluster_id: string | null;
  reservation_id: string | null;
  desired_replicas: number;
  min_replicas: number;
  max_replicas: number;
  scaling_from: number | null;
  autoscale_metric: AutoscaleMetric;
  autoscale_target: number | null;
  cooldown_s: number;
  status: EndpointStatus;
  status_reason: string | null;
  stop_requested: boolean;
  ever_ready: boolean;
  without_ready_since: Date | null;
  last_scaled_at: Date | null;
  may_place: boolean;
  place_blocker: string | null;
}

interface LiveReplica {
  id: string;
  endpoint_id: string;
  node_id: string;
  status: "starting" | "ready" | "unhealthy";
  started_at: Date;
  /** on a draining node: it keeps serving until a replacement elsewhere is ready */
  draining: boolean;
}

export interface ReconcileResult {
  replicas_stopped: number;
  replicas_placed: number;
  scaled: number;
  transitions: number;
}

/**
 * Brings every endpoint's replicas to what it wants, in one transaction under the allocation lock
 * the scheduler also takes (so jobs and replicas never race for a GPU or a quota): marks silent
 * replicas unhealthy, replaces replicas that lost their node or GPU or stayed unhealthy, applies
 * autoscaling decisions, removes replicas beyond the desired count, places missing ones, and moves
 * each endpoint's status through its state machine, recording every transition.
 */
export async function reconcileEndpoints(opts: { endpointId?: string } = {}): Promise<ReconcileResult> {
  const only = opts.endpointId ?? null;
  const result: ReconcileResult = { replicas_stopped: 0, replicas_placed: 0, scaled: 0, transitions: 0 };
  await inTransaction(
    async (c) => {
      await c.query(
        // silent: neither its serving side's samples nor the gateway's probes have said it is well for a while
        `UPDATE endpoint_replicas SET status = 'unhealthy', unhealthy_since = now(),
              health_reason = CASE WHEN last_probe_ok_at IS NULL THEN 'no samples for ' ELSE 'no samples or passing gateway probes for ' END || $1::int || ' s'
        WHERE status = 'ready' AND GREATEST(last_sample_at, last_probe_ok_at) < now() - make_interval(secs => $1::int) AND ($2::uuid IS NULL OR endpoint_id = $2::uuid)`,
        [STALE_AFTER_S, only],
      );

      // replicas that must go, each with the reason its tenant reads
      const { rows: doomed } = await c.query<{ id: string; reason: string }>(
        `SELECT id, reason FROM (
         SELECT r.id, CASE
             WHEN e.stop_requested THEN 'endpoint stopped'
             WHEN t.status <> 'active' THEN 'tenant suspended'
             WHEN nd.id IS NULL OR nd.status NOT IN ('available', 'draining') THEN 'node ' || COALESCE(nd.hostname, '(gone)') || ' is ' || COALESCE(nd.status, 'deleted') || '; replaced'
             WHEN EXISTS (SELECT 1 FROM gpus g WHERE g.allocated_replica_id = r.id AND g.status <> 'available') THEN 'a GPU of the replica became unhealthy; replaced'
             WHEN t.billing_mode = 'prepaid' AND t.balance_exhausted_at < now() - make_interval(secs => $4::int) THEN 'prepaid balance at zero past the grace period'
             WHEN r.status = 'unhealthy' AND r.unhealthy_since < now() - make_interval(secs => $1::int) THEN 'unhealthy for over ' || $1::int || ' s (' || r.health_reason || '); replaced'
             WHEN r.status = 'starting' AND r.started_at < now() - make_interval(secs => $2::int) THEN 'not ready within ' || $2::int || ' s; replaced'
           END AS reason
           FROM endpoint_replicas r JOIN endpoints e ON e.id = r.endpoint_id JOIN tenants t ON t.id = r.tenant_id
           LEFT JOIN nodes nd ON nd.id = r.node_id
          WHERE r.status <> 'stopped' AND ($3::uuid IS NULL OR r.endpoint_id = $3::uuid)
       ) x WHERE reason IS NOT NULL`,
        [REPLACE_UNHEALTHY_AFTER_S, START_TIMEOUT_S, only, env().PREPAID_GRACE_S],
      );
      result.replicas_stopped += await stopReplicas(c, doomed);

      const { rows: endpoints } = await c.query<EndpointRow>(
        `SELECT e.id, e.tenant_id, e.gpu_type, e.gpus_per_replica, e.cluster_id, e.reservation_id, e.desired_replicas, e.min_replicas, e.max_replicas,
              e.scaling_from, e.autoscale_metric, e.autoscale_target, e.cooldown_s, e.status, e.status_reason, e.stop_requested,
              e.ever_ready, e.without_ready_since, e.last_scaled_at,
              (t.status = 'active' AND t.balance_exhausted_at IS NULL) AS may_place,
              CASE WHEN t.status <> 'active' THEN 'tenant suspended' WHEN t.balance_exhausted_at IS NOT NULL THEN 'prepaid balance used up' END AS place_blocker
         FROM endpoints e JOIN tenants t ON t.id = e.tenant_id
        WHERE (e.status <> 'stopped' OR NOT e.stop_requested) AND ($1::uuid IS NULL OR e.id = $1::uuid)
        -- NO KEY UPDATE: samples arriving meanwhile hold KEY SHARE on their endpoint (their foreign key)
        ORDER BY e.created_at FOR NO KEY UPDATE OF e`,
        [only],
      );
      if (endpoints.length === 0) return;
      const ids = endpoints.map((e) => e.id);

      result.scaled += await autoscale(
        c,
        endpoints.filter((e) => !e.stop_requested && e.autoscale_metric !== "none"),
      );

      let live = await liveReplicas(c, ids);
      // beyond the desired count: the unhealthy go first, then the still starting, then the newest
      // (replicas on draining nodes are not counted: they leave below, once their replacements serve)
      const extra: Array<{ id: string; reason: string }> = [];
      for (const e of endpoints) {
        const mine = live.filter((r) => r.endpoint_id === e.id && !r.draining);
        const over = mine.length - (e.stop_requested ? 0 : e.desired_replicas);
        if (over <= 0) continue;
        const rank = { unhealthy: 0, starting: 1, ready: 2 } as const;
        mine.sort((a, b) => rank[a.status] - rank[b.status] || b.started_at.getTime() - a.started_at.getTime());
        for (const r of mine.slice(0, over)) extra.push({ id: r.id, reason: `scaled down to ${e.desired_replicas}` });
      }
      result.replicas_stopped += await stopReplicas(c, extra);
      if (extra.length) live = await liveReplicas(c, ids);

      result.replicas_placed += await placeMissing(c, endpoints, live);
      if (result.replicas_placed) live = await liveReplicas(c, ids);

      // make before break: a replica on a draining node stops once enough replicas elsewhere are
      // ready (or at once if it serves nothing itself); until then it keeps serving
      const moved = live.filter((r) => {
        if (!r.draining) return false;
        if (r.status !== "ready") return true;
        const e = endpoints.find((x) => x.id === r.endpoint_id)!;
        return live.filter((x) => x.endpoint_id === r.endpoint_id && !x.draining && x.status === "ready").length >= e.desired_replicas;
      });
      result.replicas_stopped += await stopReplicas(
        c,
        moved.map((r) => ({ id: r.id, reason: "node is draining; moved to another node" })),
      );
      if (moved.length) live = await liveReplicas(c, ids);

      result.transitions += await moveStatuses(c, endpoints, live);
    },
    { lock: "scheduler" },
  );
  // GPUs freed by stopped replicas can take queued jobs now
  if (result.replicas_stopped) await emitEvent("scheduler/run.requested", { reason: "endpoint replicas released GPUs" });
  return result;
}

async function liveReplicas(c: pg.PoolClient, endpointIds: string[]) {
  const { rows } = await c.query<LiveReplica>(
    `SELECT r.id, r.endpoint_id, r.node_id, r.status, r.started_at, n.status = 'draining' AS draining
       FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id WHERE r.endpoint_id = ANY($1::uuid[]) AND r.status <> 'stopped'`,
    [endpointIds],
  );
  return rows;
}

/** Stops replicas: the replica first, then its GPUs (the checks see a consistent pair); the stop bills its last segment. */
export async function stopReplicas(c: SqlClient, replicas: Array<{ id: string; reason: string }>): Promise<number> {
  if (replicas.length === 0) return 0;
  const stops = STOPS.bindRows(replicas, { id: (r) => r.id, reason: (r) => r.reason });
  await c.query(
    `UPDATE endpoint_replicas r SET status = 'stopped', stopped_at = clock_timestamp(), stop_reason = x.reason, unhealthy_since = NULL, health_reason = NULL
       FROM ${stops.sql} WHERE r.id = x.id AND r.status <> 'stopped'`,
    stops.values,
  );
  await c.query(`UPDATE gpus SET allocated_replica_id = NULL, updated_at = now() WHERE allocated_replica_id = ANY($1::uuid[])`, [
    replicas.map((r) => r.id),
  ]);
  return replicas.length;
}

/** Autoscaling over the last two minutes of rollups; every change (and the first refusal after one) is logged. */
async function autoscale(c: pg.PoolClient, endpoints: EndpointRow[]): Promise<number> {
  if (endpoints.length === 0) return 0;
  const { rows: figures } = await c.query<{
    endpoint_id: string;
    requests_per_s: number | null;
    p95_ms: number | null;
    last_outcome: string | null;
  }>(
    `SELECT e.id AS endpoint_id,
            m.requests::float / GREATEST(extract(epoch FROM now() - (date_trunc('minute', now()) - interval '2 minutes')), 1) AS requests_per_s,
            m.p95 AS p95_ms,
            (SELECT outcome FROM endpoint_scaling_decisions d WHERE d.endpoint_id = e.id ORDER BY d.id DESC LIMIT 1) AS last_outcome
       FROM endpoints e
       LEFT JOIN LATERAL (
         SELECT sum(requests) AS requests, sum(p95_ms * GREATEST(requests, 1)) / sum(GREATEST(requests, 1)) AS p95, count(*) AS buckets
           FROM endpoint_metrics_1m WHERE endpoint_id = e.id AND bucket >= date_trunc('minute', now()) - interval '2 minutes'
       ) m ON m.buckets > 0
      WHERE e.id = ANY($1::uuid[])`,
    [endpoints.map((e) => e.id)],
  );
  const byId = new Map(figures.map((f) => [f.endpoint_id, f]));
  // what the gateway itself saw over the same two minutes comes first (the serving side's reports remain the fallback)
  const windowStart = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 120_000);
  const seen = await gatewayMinutes(
    endpoints.map((e) => e.id),
    new Date(windowStart.getTime() + 60_000),
    new Date(),
    c,
  );
  for (const [id, minutes] of seen) {
    const g = combine(minutes.filter((m) => m.bucket >= windowStart.getTime()));
    if (g.requests === 0) continue;
    const f = byId.get(id);
    byId.set(id, {
      endpoint_id: id,
      last_outcome: f?.last_outcome ?? null,
      requests_per_s: g.requests / Math.max((Date.now() - windowStart.getTime()) / 1000, 1),
      p95_ms: g.p95Ms,
    });
  }
  let scaled = 0;
  for (const e of endpoints) {
    const f = byId.get(e.id);
    const d = decideScale({
      policy: { metric: e.autoscale_metric, target: e.autoscale_target, min: e.min_replicas, max: e.max_replicas, cooldownS: e.cooldown_s },
      desired: e.desired_replicas,
      requestsPerS: f?.requests_per_s ?? null,
      p95Ms: f?.p95_ms ?? null,
      lastScaledAt: e.last_scaled_at?.getTime() ?? null,
      now: Date.now(),
    });
    if (d.outcome === "held") {
      // a refused change is logged once, not every pass while it stays refused
      if (d.blocked && f?.last_outcome !== "held") await logDecision(c, e, d.to, d.outcome, d.observed, d.reason);
      continue;
    }
    await c.query(
      `UPDATE endpoints SET desired_replicas = $2, scaling_from = COALESCE(scaling_from, desired_replicas), last_scaled_at = now(), updated_at = now() WHERE id = $1`,
      [e.id, d.to],
    );
    await logDecision(c, e, d.to, d.outcome, d.observed, d.reason);
    e.scaling_from ??= e.desired_replicas;
    e.desired_replicas = d.to;
    scaled++;
  }
  return scaled;
}

function logDecision(c: pg.PoolClient, e: EndpointRow, to: number, outcome: string, observed: number | null, reason: string) {
  return c.query(
    `INSERT INTO endpoint_scaling_decisions (endpoint_id, from_replicas, to_replicas, metric, observed, target, outcome, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [e.id, e.desired_replicas, to, e.autoscale_metric, observed, e.autoscale_target, outcome, reason],
  );
}

/** Places the replicas each endpoint lacks on free healthy GPUs of its type on container nodes (a replica runs a serving container), within its tenant's quota. */
async function placeMissing(c: pg.PoolClient, endpoints: EndpointRow[], live: LiveReplica[]): Promise<number> {
  const staying = (e: EndpointRow) => live.filter((r) => r.endpoint_id === e.id && !r.draining);
  const wanting = endpoints.filter((e) => !e.stop_requested && e.may_place && staying(e).length < e.desired_replicas);
  if (wanting.length === 0) return 0;
  // Reservations: a node a reservation holds now serves only replicas of endpoints that name it; a
  // node a later reservation books serves none (a replica declares no end, so it would still run then).
  // (the same reads as the scheduler's cycle, lib/scheduler/capacity-queries.ts; only GPUs a replica can use are locked)
  const free = groupFreeNodes(await lockFreeGpus(c, { gpuTypes: [...new Set(wanting.map((e) => e.gpu_type))] }), await readNodeBookings(c));
  const quotas = await readTenantQuotas(c, [...new Set(wanting.map((e) => e.tenant_id))]);
  const quotaLeft = new Map([...quotas].map(([id, q]) => [id, q.quota - q.inUse]));
  const taken = new Set<string>();
  const rows: Array<{ endpoint: EndpointRow; nodeId: string; gpuIds: string[] }> = [];
  for (const e of wanting) {
    const mine = live.filter((r) => r.endpoint_id === e.id);
    const stay = staying(e);
    const nodes: FreeNode[] = [];
    for (const n of free) {
      if (n.gpuType !== e.gpu_type || (e.cluster_id && n.clusterId !== e.cluster_id)) continue;
      if (n.bookedFrom !== undefined || (n.reservationId ?? null) !== e.reservation_id) continue;
      const freeGpuIds = n.freeGpuIds.filter((id) => !taken.has(id));
      if (freeGpuIds.length) nodes.push({ nodeId: n.nodeId, freeGpuIds });
    }
    const placements = placeReplicas({
      need: e.desired_replicas - stay.length,
      gpusPerReplica: e.gpus_per_replica,
      nodes,
      occupiedNodeIds: mine.map((r) => r.node_id),
      // replicas inside a reservation are paid by it and outside the quota
      quotaLeft: e.reservation_id ? Number.MAX_SAFE_INTEGER : (quotaLeft.get(e.tenant_id) ?? 0),
    });
    for (const p of placements) {
      p.gpuIds.forEach((id) => taken.add(id));
      if (!e.reservation_id) quotaLeft.set(e.tenant_id, (quotaLeft.get(e.tenant_id) ?? 0) - p.gpuIds.length);
      rows.push({ endpoint: e, nodeId: p.nodeId, gpuIds: p.gpuIds });
    }
  }
  if (rows.length === 0) return 0;
  const ids = rows.map(() => randomUUID());
  // a replica starts now, when its GPUs are locked (not when the transaction began): never before the run that freed them ended
  const replicas = NEW_REPLICAS.bindRows(rows, {
    id: (_, i) => ids[i]!,
    endpoint_id: (r) => r.endpoint.id,
    tenant_id: (r) => r.endpoint.tenant_id,
    node_id: (r) => r.nodeId,
    gpu_type: (r) => r.endpoint.gpu_type,
    gpu_count: (r) => r.gpuIds.length,
    reservation_id: (r) => r.endpoint.reservation_id,
  });
  await c.query(
    `INSERT INTO endpoint_replicas (id, endpoint_id, tenant_id, node_id, gpu_type, gpu_count, reservation_id, started_at)
     SELECT *, clock_timestamp() FROM ${replicas.sql}`,
    replicas.values,
  );
  const gpus = GPU_REPLICAS.empty();
  rows.forEach((r, i) => {
    for (const gpuId of r.gpuIds) {
      gpus.gpu_id.push(gpuId);
      gpus.replica_id.push(ids[i]!);
    }
  });
  const allocations = GPU_REPLICAS.bind(gpus);
  await c.query(
    `UPDATE gpus g SET allocated_replica_id = x.replica_id, updated_at = now() FROM ${allocations.sql} WHERE g.id = x.gpu_id`,
    allocations.values,
  );
  // what each replica holds, remembered after it lets go (its GPU telemetry is read for these GPUs)
  await c.query(
    `UPDATE endpoint_replicas r SET gpu_ids = x.gpu_ids
       FROM (SELECT allocated_replica_id AS id, array_agg(id ORDER BY index) AS gpu_ids FROM gpus WHERE allocated_replica_id = ANY($1::uuid[]) GROUP BY 1) x
      WHERE r.id = x.id`,
    [ids],
  );
  return rows.length;
}

/**
 * Moves each endpoint's status where its replicas put it, through allowed transitions only, each
 * recorded: decided in memory, then written with one UPDATE (rows that changed) and one INSERT.
 */
async function moveStatuses(c: pg.PoolClient, endpoints: EndpointRow[], live: LiveReplica[]): Promise<number> {
  const now = Date.now();
  const byEndpoint = new Map<string, LiveReplica[]>();
  for (const r of live) byEndpoint.set(r.endpoint_id, [...(byEndpoint.get(r.endpoint_id) ?? []), r]);
  const changes: Array<{
    id: string;
    status: EndpointStatus;
    reason: string;
    everReady: boolean;
    withoutReadySince: Date | null;
    clearScaling: boolean;
    statusChanged: boolean;
  }> = [];
  const events: Array<{ id: string; from: EndpointStatus; to: EndpointStatus; reason: string }> = [];
  const observed: Array<{ id: string; ready: number; desired: number }> = [];
  for (const e of endpoints) {
    const mine = byEndpoint.get(e.id) ?? [];
    // while replicas move off a draining node, old and new serve side by side: count at most the desired number
    const migrating = mine.some((r) => r.draining);
    const cap = (n: number) => (migrating ? Math.min(n, e.desired_replicas) : n);
    const ready = cap(mine.filter((r) => r.status === "ready").length);
    if (!e.stop_requested) observed.push({ id: e.id, ready, desired: e.desired_replicas });
    const withoutReadySince = e.stop_requested || ready > 0 ? null : (e.without_ready_since?.getTime() ?? now);
    const decision = nextEndpointStatus({
      status: e.status,
      stopRequested: e.stop_requested,
      desired: e.desired_replicas,
      live: cap(mine.length),
      ready,
      unhealthy: mine.filter((r) => r.status === "unhealthy").length,
      everReady: e.ever_ready,
      scaling: e.scaling_from !== null,
      withoutReadySince,
      now,
    });
    let reason = decision.reason;
    if (!e.stop_requested && cap(mine.length) < e.desired_replicas)
      reason += e.may_place ? "; waiting for free GPUs or quota" : `; not placing: ${e.place_blocker}`;
    const everReady = decision.status === "stopped" ? false : e.ever_ready || ready > 0;
    const clearScaling = (decision.status === "ready" || decision.status === "stopped") && e.scaling_from !== null;
    const change = {
      id: e.id,
      status: decision.status,
      reason,
      everReady,
      withoutReadySince: withoutReadySince === null ? null : new Date(withoutReadySince),
      clearScaling,
      statusChanged: decision.status !== e.status,
    };
    if (
      change.statusChanged ||
      reason !== e.status_reason ||
      everReady !== e.ever_ready ||
      clearScaling ||
      (e.without_ready_since?.getTime() ?? null) !== withoutReadySince
    )
      changes.push(change);
    let from = e.status;
    for (const to of transitionPath(e.status, decision.status)) {
      events.push({ id: e.id, from, to, reason });
      from = to;
    }
  }
  if (changes.length) {
    const set = STATUS_CHANGES.bindRows(changes, {
      id: (x) => x.id,
      status: (x) => x.status,
      reason: (x) => x.reason,
      ever_ready: (x) => x.everReady,
      without_ready_since: (x) => x.withoutReadySince,
      clear_scaling: (x) => x.clearScaling,
      status_changed: (x) => x.statusChanged,
    });
    await c.query(
      `UPDATE endpoints e SET status = x.status, status_reason = x.reason, ever_ready = x.ever_ready, without_ready_since = x.without_ready_since,
              scaling_from = CASE WHEN x.clear_scaling THEN NULL ELSE e.scaling_from END,
              updated_at = CASE WHEN x.status_changed THEN now() ELSE e.updated_at END
         FROM ${set.sql}
        WHERE e.id = x.id`,
      set.values,
    );
  }
  await recordObservations(c, observed);
  if (events.length) {
    const rows = STATUS_EVENTS.bindRows(events, {
      id: (x) => x.id,
      from_status: (x) => x.from,
      to_status: (x) => x.to,
      reason: (x) => x.reason,
    });
    await c.query(
      `INSERT INTO endpoint_events (endpoint_id, from_status, to_status, reason, actor)
       SELECT id, from_status, to_status, reason, 'reconciler' FROM ${rows.sql} ORDER BY ord`,
      rows.values,
    );
  }
  return events.length;
}

/**
 * What this pass saw, per endpoint and minute: the SLA counts a minute without serving samples as
 * idle (available) only if a ready replica was seen in every pass of that minute, and a minute no
 * pass saw at all as "no data" (lib/endpoints/sla.ts).
 */
async function recordObservations(c: pg.PoolClient, observed: Array<{ id: string; ready: number; desired: number }>) {
  if (observed.length === 0) return;
  const rows = OBSERVATIONS.bindRows(observed, { id: (x) => x.id, ready: (x) => x.ready, desired: (x) => x.desired });
  await c.query(
    `INSERT INTO endpoint_observations_1m AS o (endpoint_id, bucket, observations, min_ready, max_ready, desired)
     SELECT x.id, date_trunc('minute', now()), 1, x.ready, x.ready, x.desired FROM ${rows.sql}
     ON CONFLICT (endpoint_id, bucket) DO UPDATE SET observations = o.observations + 1, min_ready = LEAST(o.min_ready, excluded.min_ready),
        max_ready = GREATEST(o.max_ready, excluded.max_ready), desired = excluded.desired`,
    rows.values,
  );
}
