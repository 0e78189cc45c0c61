-- Fleet: nodes with their lifecycle, node events, GPUs, raw GPU metrics and per-minute rollups.

CREATE TABLE "nodes" (
    "id"                    UUID NOT NULL DEFAULT gen_random_uuid(),
    "cluster_id"            UUID NOT NULL,
    "hostname"              TEXT NOT NULL,
    "pod"                   TEXT,
    "rack"                  TEXT,
    "cpu_cores"             INTEGER,
    "memory_gb"             INTEGER,
    "agent_version"         TEXT,
    "status"                TEXT NOT NULL DEFAULT 'registered',
    "status_before_offline" TEXT,
    "last_heartbeat_at"     TIMESTAMPTZ(3),
    "created_at"            TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"            TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "nodes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "nodes_status_check" CHECK ("status" IN ('registered', 'available', 'draining', 'maintenance', 'quarantined', 'offline')),
    -- an offline node remembers where it was, so the next heartbeat puts it back there (and nowhere else)
    CONSTRAINT "nodes_offline_memory_check" CHECK (("status" = 'offline') = ("status_before_offline" IS NOT NULL)),
    CONSTRAINT "nodes_status_before_offline_check" CHECK ("status_before_offline" IS NULL OR "status_before_offline" IN ('registered', 'available', 'draining', 'maintenance', 'quarantined')),
    CONSTRAINT "nodes_hostname_check" CHECK (length("hostname") BETWEEN 1 AND 253),
    CONSTRAINT "nodes_cpu_cores_check" CHECK ("cpu_cores" IS NULL OR "cpu_cores" > 0),
    CONSTRAINT "nodes_memory_gb_check" CHECK ("memory_gb" IS NULL OR "memory_gb" > 0)
);
CREATE UNIQUE INDEX "nodes_cluster_id_hostname_key" ON "nodes"("cluster_id", "hostname");
CREATE INDEX "nodes_status_idx" ON "nodes"("status");
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_cluster_id_fkey"
    FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "node_events" (
    "id"          BIGSERIAL NOT NULL,
    "node_id"     UUID NOT NULL,
    "from_status" TEXT NOT NULL,
    "to_status"   TEXT NOT NULL,
    "reason"      TEXT NOT NULL,
    "actor"       TEXT NOT NULL,
    "created_at"  TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "node_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "node_events_change_check" CHECK ("from_status" <> "to_status")
);
CREATE INDEX "node_events_node_id_created_at_idx" ON "node_events"("node_id", "created_at");
ALTER TABLE "node_events" ADD CONSTRAINT "node_events_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "gpus" (
    "id"               UUID NOT NULL DEFAULT gen_random_uuid(),
    "node_id"          UUID NOT NULL,
    "uuid"             TEXT NOT NULL,
    "index"            INTEGER NOT NULL,
    "gpu_type"         TEXT NOT NULL,
    "model"            TEXT,
    "memory_total_mb"  INTEGER NOT NULL,
    "status"           TEXT NOT NULL DEFAULT 'available',
    "unhealthy_reason" TEXT,
    "last_xid"         INTEGER,
    "last_xid_at"      TIMESTAMPTZ(3),
    "ecc_uncorrected"  INTEGER,
    "remap_failure"    BOOLEAN NOT NULL DEFAULT false,
    "missing_since"    TIMESTAMPTZ(3),
    "created_at"       TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at"       TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "gpus_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "gpus_status_check" CHECK ("status" IN ('available', 'unhealthy', 'missing')),
    -- status and the facts behind it agree
    CONSTRAINT "gpus_missing_check" CHECK (("status" = 'missing') = ("missing_since" IS NOT NULL)),
    CONSTRAINT "gpus_unhealthy_reason_check" CHECK (("status" = 'unhealthy') = ("unhealthy_reason" IS NOT NULL)),
    CONSTRAINT "gpus_index_check" CHECK ("index" BETWEEN 0 AND 63),
    CONSTRAINT "gpus_memory_check" CHECK ("memory_total_mb" > 0),
    CONSTRAINT "gpus_uuid_check" CHECK (length("uuid") BETWEEN 1 AND 128)
);
CREATE UNIQUE INDEX "gpus_uuid_key" ON "gpus"("uuid");
CREATE INDEX "gpus_node_id_idx" ON "gpus"("node_id");
CREATE INDEX "gpus_gpu_type_status_idx" ON "gpus"("gpu_type", "status");
-- two present GPUs never share a slot on one node; a swapped-out GPU keeps its row as missing
CREATE UNIQUE INDEX "gpus_node_slot_present_key" ON "gpus"("node_id", "index") WHERE "missing_since" IS NULL;
ALTER TABLE "gpus" ADD CONSTRAINT "gpus_node_id_fkey"
    FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Raw samples: append-only, idempotent on (gpu, recorded_at); BRIN on time for cheap retention scans.
CREATE TABLE "gpu_metrics" (
    "gpu_id"          UUID NOT NULL,
    "recorded_at"     TIMESTAMPTZ(3) NOT NULL,
    "utilization_pct" REAL NOT NULL,
    "memory_used_mb"  INTEGER NOT NULL,
    "memory_total_mb" INTEGER,
    "temperature_c"   REAL NOT NULL,
    "power_draw_w"    REAL NOT NULL,
    "xid_errors"      INTEGER[] NOT NULL DEFAULT '{}',
    CONSTRAINT "gpu_metrics_pkey" PRIMARY KEY ("gpu_id", "recorded_at"),
    CONSTRAINT "gpu_metrics_ranges_check" CHECK (
        "utilization_pct" BETWEEN 0 AND 100 AND "memory_used_mb" >= 0 AND
        "temperature_c" BETWEEN -40 AND 150 AND "power_draw_w" BETWEEN 0 AND 5000)
);
CREATE INDEX "gpu_metrics_recorded_at_brin" ON "gpu_metrics" USING brin ("recorded_at");
ALTER TABLE "gpu_metrics" ADD CONSTRAINT "gpu_metrics_gpu_id_fkey"
    FOREIGN KEY ("gpu_id") REFERENCES "gpus"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Per-minute rollups, kept up to date by the same statement that stores the samples.
-- Sums (not averages) so concurrent batches for the same minute combine exactly.
CREATE TABLE "gpu_metrics_1m" (
    "gpu_id"          UUID NOT NULL,
    "bucket"          TIMESTAMPTZ(3) NOT NULL,
    "samples"         INTEGER NOT NULL,
    "utilization_sum" DOUBLE PRECISION NOT NULL,
    "utilization_max" REAL NOT NULL,
    "memory_used_sum" DOUBLE PRECISION NOT NULL,
    "memory_used_max" INTEGER NOT NULL,
    "temperature_sum" DOUBLE PRECISION NOT NULL,
    "temperature_max" REAL NOT NULL,
    "power_sum"       DOUBLE PRECISION NOT NULL,
    "power_max"       REAL NOT NULL,
    CONSTRAINT "gpu_metrics_1m_pkey" PRIMARY KEY ("gpu_id", "bucket"),
    CONSTRAINT "gpu_metrics_1m_samples_check" CHECK ("samples" > 0),
    CONSTRAINT "gpu_metrics_1m_bucket_check" CHECK ("bucket" = date_trunc('minute', "bucket"))
);
CREATE INDEX "gpu_metrics_1m_bucket_idx" ON "gpu_metrics_1m"("bucket");
ALTER TABLE "gpu_metrics_1m" ADD CONSTRAINT "gpu_metrics_1m_gpu_id_fkey"
    FOREIGN KEY ("gpu_id") REFERENCES "gpus"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Fleet-wide per-minute figures per cluster, folded from gpu_metrics_1m by a background job, so
-- the 24-hour fleet chart reads 1,440 rows per cluster instead of every GPU's rollups.
CREATE TABLE "cluster_metrics_1m" (
    "cluster_id"      UUID NOT NULL,
    "bucket"          TIMESTAMPTZ(3) NOT NULL,
    "gpus_reporting"  INTEGER NOT NULL,
    "samples"         INTEGER NOT NULL,
    "utilization_sum" DOUBLE PRECISION NOT NULL,
    "temperature_max" REAL NOT NULL,
    "power_sum"       DOUBLE PRECISION NOT NULL,
    CONSTRAINT "cluster_metrics_1m_pkey" PRIMARY KEY ("cluster_id", "bucket"),
    CONSTRAINT "cluster_metrics_1m_samples_check" CHECK ("samples" > 0 AND "gpus_reporting" > 0)
);
CREATE INDEX "cluster_metrics_1m_bucket_idx" ON "cluster_metrics_1m"("bucket");
ALTER TABLE "cluster_metrics_1m" ADD CONSTRAINT "cluster_metrics_1m_cluster_id_fkey"
    FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE;
