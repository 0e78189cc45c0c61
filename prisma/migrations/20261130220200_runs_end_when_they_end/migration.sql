-- A run's end (its placement's ended_at, its final usage segment, a replica's stopped_at) is read
-- from the clock when its ending transaction ends it, no longer that transaction's start: an ending
-- that waited for the meter (which had just billed the still-running run up to its own time) ended
-- the placement before the last billed second, and billed a zero-length final segment after it.
-- Starts already come from the clock (20261130220100); billing now tiles each run exactly.
CREATE OR REPLACE FUNCTION "jobs_bill_ended_run"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_usage_segment"(OLD."id", OLD."tenant_id", OLD."attempts", OLD."gpu_type", OLD."gpu_count", OLD."started_at", 'final', clock_timestamp());
    RETURN NULL;
END $$;

-- The placement ends where its final segment does (row triggers fire in name order: the run was
-- billed just before this), so the history and the bill name the same millisecond.
CREATE OR REPLACE FUNCTION "jobs_close_placement"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "job_placements" p
       SET "ended_at" = greatest(COALESCE((SELECT u."ended_at" FROM "usage_events" u WHERE u."job_id" = NEW."id" AND u."attempt" = p."attempt" AND u."kind" = 'final'), clock_timestamp()), p."started_at"),
           "end_status" = NEW."status"
     WHERE p."job_id" = NEW."id" AND p."ended_at" IS NULL;
    RETURN NULL;
END;
$$;

-- the replica's own recorded stop (set from the clock by whoever stops it)
CREATE OR REPLACE FUNCTION "endpoint_replicas_bill_stop"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "bill_replica_segment"(NEW."id", 'final', COALESCE(NEW."stopped_at", clock_timestamp()));
    RETURN NULL;
END $$;
