-- What the reconciler saw of each endpoint, per minute: the fewest and most ready replicas over
-- its passes in that minute. The SLA needs it to tell three kinds of minute without serving
-- samples apart: idle (a ready replica all along: available), silent (no ready replica at some
-- point: down), and unobserved (no pass at all: the control plane itself was not running, so the
-- minute is "no data", neither up nor down). One row per endpoint and minute, upserted by every
-- reconciler pass; pruned with the other per-minute rollups.
CREATE TABLE "endpoint_observations_1m" (
    "endpoint_id"  UUID NOT NULL,
    "bucket"       TIMESTAMPTZ(3) NOT NULL,
    "observations" INTEGER NOT NULL,
    "min_ready"    INTEGER NOT NULL,
    "max_ready"    INTEGER NOT NULL,
    "desired"      INTEGER NOT NULL,
    CONSTRAINT "endpoint_observations_1m_pkey" PRIMARY KEY ("endpoint_id", "bucket"),
    CONSTRAINT "endpoint_observations_1m_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "endpoint_observations_1m_bucket_check" CHECK ("bucket" = date_trunc('minute', "bucket")),
    CONSTRAINT "endpoint_observations_1m_counts_check" CHECK ("observations" > 0 AND "min_ready" >= 0 AND "min_ready" <= "max_ready" AND "desired" >= 0)
);
CREATE INDEX "endpoint_observations_1m_bucket_idx" ON "endpoint_observations_1m" ("bucket");
