-- GPUs each tenant holds (the one definition quotas, the scheduler and the tenant pages share), with
-- the same answer, read from the tenant's running jobs instead of from every GPU. The jobs' part
-- joined each GPU to its job and so read every job the tenant ever ran and scanned the whole gpus
-- table (4 ms for a tenant with 1,000 GPUs and 3,000 finished jobs on a fleet of 11,000; it grows
-- with the fleet and with the tenant's history), on every submit, every cycle's quota read and
-- every allocation's quota check. Only a running job holds GPUs, exactly gpu_count of them: the gang
-- check holds that after each statement that moves GPUs and the allocation check at commit. So a
-- tenant with no reservation in force counts its running jobs' gpu_count; one with a reservation
-- in force counts its running jobs' GPUs one by one, as before, to leave out those on the nodes
-- its reservations hold now (they count as the reservation's); that part is read from the
-- reservations in force, so a tenant with none never reaches its GPUs. The reservations in force
-- are read once, for every part.
CREATE OR REPLACE FUNCTION "tenant_gpus_in_use"(p_tenants UUID[]) RETURNS TABLE ("tenant_id" UUID, "in_use" INTEGER) LANGUAGE sql STABLE AS $$
    WITH in_force AS (
        SELECT rn.tenant_id, rn.node_id, rn.gpu_count FROM reservation_nodes rn
         WHERE rn.tenant_id = ANY(p_tenants) AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now()
    )
    SELECT x.tenant_id, sum(x.n)::int FROM (
        SELECT j.tenant_id, j.gpu_count AS n FROM jobs j
         WHERE j.tenant_id = ANY(p_tenants) AND j.status = 'running'
           AND NOT EXISTS (SELECT 1 FROM in_force f WHERE f.tenant_id = j.tenant_id)
        UNION ALL
        SELECT j.tenant_id, 1
          FROM (SELECT DISTINCT f.tenant_id FROM in_force f) reserving
          JOIN jobs j ON j.tenant_id = reserving.tenant_id AND j.status = 'running'
          JOIN gpus g ON g.allocated_job_id = j.id
         WHERE NOT EXISTS (SELECT 1 FROM in_force f WHERE f.node_id = g.node_id AND f.tenant_id = j.tenant_id)
        UNION ALL
        SELECT r.tenant_id, 1 FROM gpus g JOIN endpoint_replicas r ON r.id = g.allocated_replica_id
         WHERE r.tenant_id = ANY(p_tenants)
           AND NOT EXISTS (SELECT 1 FROM in_force f WHERE f.node_id = g.node_id AND f.tenant_id = r.tenant_id)
        UNION ALL
        SELECT p.tenant_id, 1 FROM gpus g JOIN pods p ON p.id = g.allocated_pod_id WHERE p.tenant_id = ANY(p_tenants)
        UNION ALL
        SELECT f.tenant_id, f.gpu_count FROM in_force f
    ) x GROUP BY x.tenant_id
$$;

-- What that count rests on, kept by the database for removals too: a GPU that work holds (a job, an
-- endpoint replica, a pod) is never deleted from under it, nor with its node. Nothing in GPUForge
-- deletes such a GPU (an agent's inventory marks a GPU missing and keeps its holder; a rented node is
-- removed only when it has no GPUs); a hand-written DELETE is refused, and changes nothing.
CREATE FUNCTION "gpus_delete_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    held RECORD;
BEGIN
    SELECT o.id, COALESCE(o.allocated_job_id, o.allocated_replica_id, o.allocated_pod_id) AS holder INTO held
      FROM old_rows o
     WHERE o.allocated_job_id IS NOT NULL OR o.allocated_replica_id IS NOT NULL OR o.allocated_pod_id IS NOT NULL
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'GPU % is held by % and cannot be removed: end its work first', held.id, held.holder USING ERRCODE = '23503';
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER "gpus_delete_guard" AFTER DELETE ON "gpus"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "gpus_delete_guard"();
