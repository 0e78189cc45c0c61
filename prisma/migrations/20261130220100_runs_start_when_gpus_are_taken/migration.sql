-- A run's start (jobs.started_at, job_placements.started_at, endpoint_replicas.started_at) is now the
-- moment its GPUs were taken, read from the clock after the allocating transaction locked them, no
-- longer that transaction's start: a cycle that waited for the allocation lock began long before it
-- saw a GPU freed by a run that ended meanwhile, and recorded (and billed) its start before that
-- run's end — the same GPU held by two runs on paper, and billed twice, for that long.
--
-- The allocation guard recognised a new allocation by started_at = now() (the transaction's start);
-- it now compares each GPU row before and after the statement instead.
CREATE OR REPLACE FUNCTION "gpus_allocation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT n.id, (n.status <> 'available' OR nd.status <> 'available') AS unavailable INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN jobs j ON j.id = n.allocated_job_id JOIN nodes nd ON nd.id = n.node_id
     WHERE o.allocated_job_id IS DISTINCT FROM n.allocated_job_id
       AND (n.status <> 'available' OR nd.status <> 'available' OR ((j.image IS NOT NULL OR j.command IS NOT NULL) AND NOT nd.containers))
     LIMIT 1;
    IF FOUND AND bad.unavailable THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for new work', bad.id USING ERRCODE = '23514';
    ELSIF FOUND THEN
        RAISE EXCEPTION 'GPU % is on a node that does not run containers; the job runs an image or a command', bad.id USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
DROP TRIGGER "gpus_allocation_guard" ON "gpus";
CREATE TRIGGER "gpus_allocation_guard" AFTER UPDATE ON "gpus"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_allocation_guard"();
