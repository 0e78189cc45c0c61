import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { ingestPool } from "@/lib/db/client";
import { columnSet } from "@/lib/db/column-set";
import { env } from "@/lib/env";
import { forbidden, payloadTooLarge } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { emitEvent } from "@/lib/background/emit";
import { reviveOfflineNodes } from "@/lib/fleet/revive-offline-nodes";
import { FATAL_XIDS, firstFatalXid } from "@/lib/fleet/xid-policy";
import { processMetrics } from "@/lib/observability/process-metrics";
import { GroupCommit } from "./group-commit";
import { gpuSample, MAX_SAMPLES_PER_REQUEST, type GpuSample } from "./schemas";

const MAX_FUTURE_MS = 5 * 60_000;

/** One element per sample ($1-$11); `req` is the caller's report, `recorded_ms` epoch milliseconds. */
const SAMPLES = columnSet(
  {
    req: "int[]",
    idx: "int[]",
    gpu_id: "uuid[]",
    gpu_uuid: "text[]",
    recorded_ms: "float8[]",
    util: "real[]",
    mem_used: "int[]",
    mem_total: "int[]",
    temp: "real[]",
    power: "real[]",
    xids: "text[]",
  },
  { alias: "t" },
);

// One statement, one round trip, for the reports of several callers at once (group commit, below):
// resolve GPUs (an agent's samples only within its cluster, or its node for a node-bound key), store the new samples (idempotent on
// gpu + recorded_at), queue exactly those for the per-minute rollups, count the reports as
// heartbeats and, only in the variant for groups that carry a fatal XID, mark those GPUs
// unhealthy (an UPDATE of gpus fires its statement triggers even when it changes no row).
// Figures come back per caller (`req`). The writing steps need not be read to run: PostgreSQL
// runs every data-modifying WITH step to completion whether or not the main query reads it.
// The ingest pool plans each variant once per connection (a generic plan): every step below is an
// index lookup per input row, so one plan fits a report of 8 samples and a batch of 5,000 alike.
function ingestSql(withFatal: boolean): string {
  return `
WITH input AS (
  -- one element per sample, except the callers' scopes ($12, $13: one per report, by req); times
  -- come as epoch milliseconds (exact in float8, and a third of the cost of parsing ISO text)
  SELECT t.*, to_timestamp(t.recorded_ms / 1000) AS recorded_at, ($12::uuid[])[t.req + 1] AS scope, ($13::uuid[])[t.req + 1] AS node_scope
    FROM ${SAMPLES.sql(1)}
), resolved AS (
  -- one index lookup per sample (the planner cannot see the batch size and would scan every GPU)
  SELECT i.*, g.id AS gid, g.node_id, n.status AS node_status,
         (g.id IS NOT NULL AND (i.scope IS NULL OR n.cluster_id = i.scope) AND (i.node_scope IS NULL OR g.node_id = i.node_scope)) AS in_scope
    FROM input i
    LEFT JOIN LATERAL (
      SELECT id, node_id FROM gpus WHERE i.gpu_id IS NOT NULL AND id = i.gpu_id
      UNION ALL
      SELECT id, node_id FROM gpus WHERE i.gpu_id IS NULL AND uuid = i.gpu_uuid
    ) g ON true
    LEFT JOIN nodes n ON n.id = g.node_id
), scoped AS (
  SELECT * FROM resolved WHERE in_scope
), ins AS (
  INSERT INTO gpu_metrics (gpu_id, recorded_at, utilization_pct, memory_used_mb, memory_total_mb, temperature_c, power_draw_w, xid_errors)
  SELECT gid, recorded_at, util, mem_used, mem_total, temp, power, COALESCE(xids::int[], '{}') FROM scoped
  ON CONFLICT (gpu_id, recorded_at) DO NOTHING
  RETURNING gpu_id, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w, xid_errors
), pending AS (
  -- the per-minute rollups take these later (lib/metrics/fold-rollups.ts): only samples stored
  -- now, so a re-sent sample is never counted twice
  INSERT INTO gpu_metrics_1m_pending (gpu_ids, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w)
  SELECT array_agg(gpu_id), array_agg(recorded_at), array_agg(utilization_pct), array_agg(memory_used_mb), array_agg(temperature_c), array_agg(power_draw_w)
    FROM ins HAVING count(*) > 0
),${
    withFatal
      ? ` fatal AS (
  UPDATE gpus g SET status = 'unhealthy', unhealthy_reason = 'fatal_xid:' || f.xid, last_xid = f.xid, last_xid_at = now(), updated_at = now()
    FROM (SELECT DISTINCT ON (gpu_id) gpu_id, x AS xid FROM ins, unnest(xid_errors) AS x
           WHERE x = ANY($14::int[]) ORDER BY gpu_id, recorded_at DESC) f
   WHERE g.id = f.gpu_id AND g.status <> 'missing'
),`
      : ""
  } reporting AS (
  SELECT DISTINCT node_id FROM scoped WHERE node_status <> 'offline'
), alive AS (
  -- joined by key, so a generic plan looks each node up rather than scanning them all
  UPDATE nodes n SET last_heartbeat_at = now()
    FROM reporting r
   WHERE n.id = r.node_id AND (n.last_heartbeat_at IS NULL OR n.last_heartbeat_at < now() - interval '5 seconds')
), stored AS (
  -- a sample sent twice in one statement is stored once, and counted for the first caller
  SELECT DISTINCT ON (s.gid, s.recorded_at) s.req FROM scoped s JOIN ins ON ins.gpu_id = s.gid AND ins.recorded_at = s.recorded_at
   ORDER BY s.gid, s.recorded_at, s.req
)
SELECT r.req,
       count(*) FILTER (WHERE r.in_scope)::int AS accepted,
       COALESCE(max(st.n), 0)::int AS stored,
       COALESCE(array_agg(r.idx) FILTER (WHERE NOT r.in_scope), '{}') AS unknown,
       ${withFatal ? `COALESCE(array_agg(DISTINCT r.node_id) FILTER (WHERE r.in_scope AND r.xids IS NOT NULL AND r.xids::int[] && $14::int[]), '{}')` : `'{}'::uuid[]`} AS fatal_nodes,
       COALESCE(array_agg(DISTINCT r.node_id) FILTER (WHERE r.in_scope AND r.node_status = 'offline'), '{}') AS offline_nodes
  FROM resolved r LEFT JOIN (SELECT req, count(*) AS n FROM stored GROUP BY req) st ON st.req = r.req
 GROUP BY r.req`;
}
const INGEST_SQL = ingestSql(false);
const INGEST_WITH_FATAL_XIDS_SQL = ingestSql(true);

interface Report {
  scope: string | null;
  nodeScope: string | null;
  /** `at`: recorded_at in epoch milliseconds */
  samples: Array<{ index: number; sample: GpuSample; at: number }>;
}
interface ReportOutcome {
  accepted: number;
  stored: number;
  unknown: number[];
  fatal_nodes: string[];
  offline_nodes: string[];
}

async function writeReports(reports: Report[]): Promise<ReportOutcome[]> {
  // one pass, one array per column: a batch is up to 5,000 samples, and per-sample objects here
  // were a good part of the ingest server's garbage
  const cols = SAMPLES.empty();
  let withFatal = false;
  reports.forEach((r, q) => {
    for (const { index, sample: x, at: t } of r.samples) {
      cols.req.push(q);
      cols.idx.push(index);
      cols.gpu_id.push(x.gpu_id ?? null);
      cols.gpu_uuid.push(x.gpu_uuid ?? null);
      cols.recorded_ms.push(t);
      cols.util.push(x.utilization_pct);
      cols.mem_used.push(x.memory_used_mb);
      cols.mem_total.push(x.memory_total_mb ?? null);
      cols.temp.push(x.temperature_c);
      cols.power.push(x.power_draw_w);
      cols.xids.push(x.xid_errors?.length ? `{${x.xid_errors.join(",")}}` : null);
      withFatal ||= firstFatalXid(x.xid_errors) !== undefined;
    }
  });
  // a named statement is planned once per connection; the ingest pool does not wait for WAL flush
  const { rows: out } = await ingestPool().query<ReportOutcome & { req: number }>({
    name: withFatal ? "ingest_gpu_metrics_fatal_v7" : "ingest_gpu_metrics_v7",
    text: withFatal ? INGEST_WITH_FATAL_XIDS_SQL : INGEST_SQL,
    values: [
      ...SAMPLES.bind(cols).values,
      reports.map((r) => r.scope),
      reports.map((r) => r.nodeScope),
      ...(withFatal ? [FATAL_XIDS] : []),
    ],
  });
  const byReq = new Map(out.map((o) => [o.req, o]));
  return reports.map((_, q) => byReq.get(q) ?? { accepted: 0, stored: 0, unknown: [], fatal_nodes: [], offline_nodes: [] });
}

const globalForIngest = globalThis as unknown as { gpuMetricsGroupCommit?: GroupCommit<Report, ReportOutcome> };
function groupCommit() {
  globalForIngest.gpuMetricsGroupCommit ??= new GroupCommit(writeReports, {
    maxInFlight: Math.min(env().INGEST_MAX_STATEMENTS, env().DATABASE_POOL_SIZE),
    maxWeight: MAX_SAMPLES_PER_REQUEST,
    // agents' small reports share one statement at a time (a statement's fixed cost dwarfs 8
    // samples); large batches also get the other slots
    minWeightBeyondFirst: 500,
    // one report's problem never fails the reports it was grouped with
    retryAloneOnError: true,
  });
  return globalForIngest.gpuMetricsGroupCommit;
}

const FOLD_AT_MOST_EVERY_MS = 5_000;
let lastFoldWake = 0;

/**
 * A fatal XID may quarantine a node: the evaluator wakes at once (it reads the GPU's state, not the
 * rollups). Other samples reach the rollups with the next fold, which wakes the evaluator itself;
 * the fold is asked for at most every 5 s per process (its sweep runs every 5 s in-process anyway;
 * with Inngest, whose cron runs once a minute, this keeps rollups seconds behind, not a minute).
 */
async function wakeBackground(fatal: boolean) {
  if (fatal) await emitEvent("alerts/evaluate.requested", { reason: "fatal XID reported" });
  const now = Date.now();
  if (now - lastFoldWake < FOLD_AT_MOST_EVERY_MS) return;
  lastFoldWake = now;
  await emitEvent("metrics/rollups.fold.requested", { reason: "metrics arrived" });
}

export interface IngestResult {
  accepted: number;
  stored: number;
  rejected: Array<{ index: number; error: string }>;
  fatalNodeIds: string[];
}

export async function ingestGpuMetrics(principal: Principal, raw: unknown[]): Promise<IngestResult> {
  if (principal.kind === "tenant") throw forbidden("Metrics are posted by agents and operators");
  if (raw.length > MAX_SAMPLES_PER_REQUEST) {
    throw payloadTooLarge(`A request carries at most ${MAX_SAMPLES_PER_REQUEST} samples; this one has ${raw.length}`);
  }
  const rejected: IngestResult["rejected"] = [];
  const valid: Report["samples"] = [];
  const now = Date.now();
  raw.forEach((value, index) => {
    const r = gpuSample.safeParse(value);
    if (!r.success) {
      rejected.push({
        index,
        error: zodIssuesToDetails(r.error.issues, "sample")
          .map((d) => `${d.path}: ${d.message}`)
          .join("; "),
      });
      return;
    }
    const at = r.data.recorded_at ? Date.parse(r.data.recorded_at) : now;
    if (at > now + MAX_FUTURE_MS) {
      rejected.push({ index, error: "recorded_at: More than 5 minutes in the future" });
      return;
    }
    valid.push({ index, sample: r.data, at });
  });
  if (valid.length === 0) {
    processMetrics().ingestSamples.inc({ outcome: "rejected" }, rejected.length);
    return { accepted: 0, stored: 0, rejected, fatalNodeIds: [] };
  }

  const agent = principal.kind === "agent" ? principal : null;
  const result = await groupCommit().submit(
    { scope: agent?.clusterId ?? null, nodeScope: agent?.nodeId ?? null, samples: valid },
    valid.length,
  );
  for (const index of result.unknown)
    rejected.push({ index, error: agent?.nodeId ? "gpu: No such GPU on this key's node" : "gpu: No such GPU in this cluster" });
  rejected.sort((a, b) => a.index - b.index);
  const m = processMetrics();
  m.ingestReports.inc();
  m.ingestSamples.inc({ outcome: "stored" }, result.stored);
  m.ingestSamples.inc({ outcome: "duplicate" }, result.accepted - result.stored);
  m.ingestSamples.inc({ outcome: "rejected" }, rejected.length);
  if (result.offline_nodes.length) await reviveOfflineNodes(result.offline_nodes, principal.label);
  await wakeBackground(result.fatal_nodes.length > 0);
  return { accepted: result.accepted, stored: result.stored, rejected, fatalNodeIds: result.fatal_nodes };
}
