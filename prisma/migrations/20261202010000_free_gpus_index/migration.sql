-- The GPUs that can take work now, in node and index order: what every scheduling cycle and the
-- endpoint reconciler read first (lib/scheduler/capacity-queries.ts). A cycle woken by a submit read
-- them by scanning every GPU of the fleet and sorting the free ones.
CREATE INDEX "gpus_free_idx" ON "gpus" ("node_id", "index")
  WHERE "status" = 'available' AND "allocated_job_id" IS NULL AND "allocated_replica_id" IS NULL AND "allocated_pod_id" IS NULL AND "foreign_holder" IS NULL;
