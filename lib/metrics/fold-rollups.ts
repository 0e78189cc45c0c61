import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { ingestPool } from "@/lib/db/client";

// Adds the samples the ingest statement queued (gpu_metrics_1m_pending, one row per statement) into
// the per-minute rollups. Each pass deletes some pending rows and adds what they hold in the same
// transaction, so a sample is counted once: a pass that fails, or whose process dies, rolls back
// and leaves its rows for the next one. Concurrent passes never take the same rows: a pass waits
// for rows another has locked (it does not skip them) and finds them gone once that one commits,
// so a fold that returns has added everything queued before it began. Partial sums combine exactly (sums and maxima), so it does not matter which pass adds
// which samples of a minute, or in what order.
//
// A GPU deleted since its samples were queued took its samples and rollups with it (ON DELETE
// CASCADE): its queued samples are dropped, not added (the rollups' foreign key would refuse them).
// Rollup rows are written in key order, so passes folding into the same rows wait, never deadlock.
export const FOLD_ROLLUPS_SQL = `
WITH taken AS (
  DELETE FROM gpu_metrics_1m_pending
   WHERE id = ANY(ARRAY(SELECT id FROM gpu_metrics_1m_pending ORDER BY id LIMIT $1 FOR UPDATE))
  RETURNING gpu_ids, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w
), minutes AS (
  SELECT s.gpu_id, date_trunc('minute', s.recorded_at) AS bucket, count(*)::int AS samples,
         sum(s.util::float8) AS utilization_sum, max(s.util) AS utilization_max, sum(s.mem::float8) AS memory_used_sum, max(s.mem) AS memory_used_max,
         sum(s.temp::float8) AS temperature_sum, max(s.temp) AS temperature_max, sum(s.power::float8) AS power_sum, max(s.power) AS power_max
    FROM taken, unnest(taken.gpu_ids, taken.recorded_at, taken.utilization_pct, taken.memory_used_mb, taken.temperature_c, taken.power_draw_w)
         AS s(gpu_id, recorded_at, util, mem, temp, power)
   GROUP BY 1, 2
), folded AS (
  INSERT INTO gpu_metrics_1m AS m (gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max,
                                   temperature_sum, temperature_max, power_sum, power_max)
  SELECT * FROM minutes WHERE EXISTS (SELECT 1 FROM gpus g WHERE g.id = minutes.gpu_id) ORDER BY 1, 2
  ON CONFLICT (gpu_id, bucket) DO UPDATE SET
    samples = m.samples + EXCLUDED.samples,
    utilization_sum = m.utilization_sum + EXCLUDED.utilization_sum, utilization_max = greatest(m.utilization_max, EXCLUDED.utilization_max),
    memory_used_sum = m.memory_used_sum + EXCLUDED.memory_used_sum, memory_used_max = greatest(m.memory_used_max, EXCLUDED.memory_used_max),
    temperature_sum = m.temperature_sum + EXCLUDED.temperature_sum, temperature_max = greatest(m.temperature_max, EXCLUDED.temperature_max),
    power_sum = m.power_sum + EXCLUDED.power_sum, power_max = greatest(m.power_max, EXCLUDED.power_max)
  RETURNING 1
)
SELECT (SELECT count(*) FROM taken)::int AS statements, (SELECT COALESCE(sum(cardinality(gpu_ids)), 0) FROM taken)::int AS samples,
       (SELECT count(*) FROM folded)::int AS minutes`;

/** Pending rows per pass: each holds one ingest statement's samples (at most 5,000). */
const ROWS_PER_PASS = 50;
const EVALUATE_AT_MOST_EVERY_MS = 10_000;
let lastWake = 0;

export interface FoldResult {
  /** ingest statements whose samples were added */
  statements: number;
  samples: number;
  /** rollup rows (GPU and minute) written */
  minutes: number;
}

/**
 * Adds every queued sample into the per-minute rollups, pass by pass until none is left: what was
 * queued before the call is in the rollups when it returns. New
 * rollups may change what fires, so a fold that added samples wakes the alert evaluator (at most
 * every 10 s per process; fatal XIDs wake it at once from the ingest path).
 */
export async function foldGpuRollups(opts: { rowsPerPass?: number } = {}): Promise<FoldResult> {
  const total: FoldResult = { statements: 0, samples: 0, minutes: 0 };
  const limit = opts.rowsPerPass ?? ROWS_PER_PASS;
  for (;;) {
    // the telemetry pool: a crash may lose the last fraction of a second of folds, always together
    // with the pending rows they deleted (one transaction), never one without the other
    const { rows } = await ingestPool().query<FoldResult>({ name: "fold_gpu_rollups_v1", text: FOLD_ROLLUPS_SQL, values: [limit] });
    const pass = rows[0]!;
    total.statements += pass.statements;
    total.samples += pass.samples;
    total.minutes += pass.minutes;
    if (pass.statements < limit) break;
  }
  if (total.samples > 0 && Date.now() - lastWake >= EVALUATE_AT_MOST_EVERY_MS) {
    lastWake = Date.now();
    await emitEvent("alerts/evaluate.requested", { reason: "metrics arrived" });
  }
  return total;
}
