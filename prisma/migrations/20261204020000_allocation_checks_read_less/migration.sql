-- Two checks of every scheduling cycle's writes cost less for the same verdicts (EXPLAIN ANALYZE of
-- a cycle's writes, 2,500 jobs started on 10,000 GPUs; figures in docs/performance.md).
--
-- A job starts only for an active tenant. The check ran once per starting job, before its row was
-- written: a query for each, 2,500 in a cycle. It runs once per statement now, on the rows the
-- statement made running, with the same error; a statement that starts nothing reads only its own
-- new rows. Pods, replicas and reservations keep the per-row check (they start one at a time).
CREATE OR REPLACE FUNCTION "jobs_tenant_active_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    suspended UUID;
BEGIN
    SELECT n."tenant_id" INTO suspended
      FROM new_rows n JOIN "tenants" t ON t."id" = n."tenant_id"
     WHERE n."status" = 'running' AND t."status" <> 'active'
       AND NOT EXISTS (SELECT 1 FROM old_rows o WHERE o."id" = n."id" AND o."status" = 'running')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'tenant % is suspended: its work cannot start', suspended USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER "jobs_tenant_active_guard" ON "jobs";
CREATE TRIGGER "jobs_tenant_active_guard" AFTER UPDATE ON "jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION "jobs_tenant_active_guard"();

-- The GPU allocation guard looked for a GPU given to a job while unhealthy, or on an unavailable
-- node, or on a node without containers for a job that runs one. Asked for the first such GPU, the
-- planner expected to meet one at once and probed each GPU's node and job by index: 10,000 probes of
-- each for a cycle that breaks no rule, as every cycle does. It reads the nodes and the jobs whole
-- now (hash joins) and finds the same GPU.
CREATE OR REPLACE FUNCTION "gpus_allocation_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    SELECT (array_agg(n.id ORDER BY n.id) FILTER (WHERE n.status <> 'available' OR nd.status <> 'available'))[1] AS unavailable,
           (array_agg(n.id ORDER BY n.id))[1] AS container INTO bad
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN jobs j ON j.id = n.allocated_job_id JOIN nodes nd ON nd.id = n.node_id
     WHERE o.allocated_job_id IS DISTINCT FROM n.allocated_job_id
       AND (n.status <> 'available' OR nd.status <> 'available' OR ((j.image IS NOT NULL OR j.command IS NOT NULL) AND NOT nd.containers));
    IF bad.unavailable IS NOT NULL THEN
        RAISE EXCEPTION 'GPU % is unhealthy or its node is not available for new work', bad.unavailable USING ERRCODE = '23514';
    ELSIF bad.container IS NOT NULL THEN
        RAISE EXCEPTION 'GPU % is on a node that does not run containers; the job runs an image or a command', bad.container USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
