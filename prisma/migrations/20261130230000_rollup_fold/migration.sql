-- Per-minute rollups are no longer kept up to date inside the statement that stores the samples.
-- That statement now appends one row here per statement: the samples it newly stored (never a
-- re-sent one), as arrays. A background job (lib/metrics/fold-rollups.ts) deletes pending rows
-- and adds them into gpu_metrics_1m in the same transaction, so every stored sample is counted in
-- the rollups exactly once: a fold that fails or whose process dies rolls back with its rows
-- still pending, and two folds never take the same row (FOR UPDATE).
--
-- Why: the upsert per (GPU, minute) — a conflict check, a row lock, an update or an insert with
-- its foreign-key check and two index entries — cost about a third of the database's work per
-- sample, and it was paid once per sample. Folded a few seconds later, it is paid once per
-- (GPU, minute) seen in that interval, and appending one row per statement costs almost nothing.
-- Readers see a sample in the rollups within the fold interval (5 s with the in-process driver).
CREATE TABLE "gpu_metrics_1m_pending" (
    "id"              BIGSERIAL NOT NULL,
    "gpu_ids"         UUID[] NOT NULL,
    "recorded_at"     TIMESTAMPTZ(3)[] NOT NULL,
    "utilization_pct" REAL[] NOT NULL,
    "memory_used_mb"  INTEGER[] NOT NULL,
    "temperature_c"   REAL[] NOT NULL,
    "power_draw_w"    REAL[] NOT NULL,
    "created_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "gpu_metrics_1m_pending_pkey" PRIMARY KEY ("id"),
    -- one element per sample in every array
    CONSTRAINT "gpu_metrics_1m_pending_shape_check" CHECK (
        cardinality("gpu_ids") > 0 AND cardinality("recorded_at") = cardinality("gpu_ids") AND
        cardinality("utilization_pct") = cardinality("gpu_ids") AND cardinality("memory_used_mb") = cardinality("gpu_ids") AND
        cardinality("temperature_c") = cardinality("gpu_ids") AND cardinality("power_draw_w") = cardinality("gpu_ids"))
);
