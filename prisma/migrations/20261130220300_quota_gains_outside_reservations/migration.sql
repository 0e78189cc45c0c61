-- A tenant never gains GPUs beyond its quota — counted as tenant_gpus_in_use() counts them. The
-- check refused any statement that gave a tenant GPUs while its total was over the quota, work
-- inside its own reservation included. A reservation that starts while the tenant's on-demand
-- work fills the quota puts the total over it by design (that work is not evicted; the tenant's
-- next on-demand work waits), and then every allocation inside the reservation was refused: the
-- scheduling cycle that tried one failed as a whole, for every tenant, until the earlier work
-- ended (the chaos soak saw the fleet's scheduling stop for minutes). GPUs taken on nodes the
-- tenant's own reservation holds now are not on demand: they neither count nor make the tenant a
-- gainer, exactly as tenant_gpus_in_use() leaves them out.
CREATE OR REPLACE FUNCTION "gpus_quota_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over RECORD;
    gainers UUID[];
BEGIN
    SELECT array_agg(tenant_id) INTO gainers FROM (
        SELECT d.tenant_id FROM (
            SELECT j.tenant_id, n.node_id, 1 AS delta FROM new_rows n JOIN jobs j ON j.id = n.allocated_job_id
            UNION ALL SELECT r.tenant_id, n.node_id, 1 FROM new_rows n JOIN endpoint_replicas r ON r.id = n.allocated_replica_id
            UNION ALL SELECT j.tenant_id, o.node_id, -1 FROM old_rows o JOIN jobs j ON j.id = o.allocated_job_id
            UNION ALL SELECT r.tenant_id, o.node_id, -1 FROM old_rows o JOIN endpoint_replicas r ON r.id = o.allocated_replica_id
        ) d
        WHERE NOT EXISTS (SELECT 1 FROM reservation_nodes rn WHERE rn.node_id = d.node_id AND rn.tenant_id = d.tenant_id AND rn.live AND rn.starts_at <= now() AND rn.ends_at > now())
        GROUP BY d.tenant_id HAVING sum(d.delta) > 0
    ) g;
    IF gainers IS NULL THEN RETURN NULL; END IF;
    SELECT t.id, t.gpu_quota, u.in_use INTO over
      FROM tenant_gpus_in_use(gainers) u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.in_use > t.gpu_quota LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'tenant % would hold % GPUs, over its quota of %', over.id, over.in_use, over.gpu_quota USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END;
$$;
