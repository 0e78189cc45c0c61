-- A suspended tenant's work stops: its waiting jobs are blocked with block_reason 'suspended' (back
-- to the queue on reactivation), and the database refuses to start any work of a tenant that is not
-- active, whatever code path tries (the scheduler's query already leaves such tenants out).
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_block_reason_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_block_reason_check" CHECK (("status" = 'blocked') = ("block_reason" IS NOT NULL)
    AND ("block_reason" IS NULL OR "block_reason" IN ('quota', 'billing', 'suspended')));

CREATE FUNCTION "work_tenant_active_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM "tenants" WHERE "id" = NEW."tenant_id" AND "status" = 'active') THEN
        RAISE EXCEPTION 'tenant % is suspended: its work cannot start', NEW."tenant_id" USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
-- only when a job starts (a few per cycle), not on the thousands of reason updates a cycle makes
CREATE TRIGGER "jobs_tenant_active_guard" BEFORE UPDATE OF "status" ON "jobs"
    FOR EACH ROW WHEN (NEW."status" = 'running' AND OLD."status" <> 'running') EXECUTE FUNCTION "work_tenant_active_guard"();
CREATE TRIGGER "endpoint_replicas_tenant_active_guard" BEFORE INSERT ON "endpoint_replicas"
    FOR EACH ROW WHEN (NEW."status" <> 'stopped') EXECUTE FUNCTION "work_tenant_active_guard"();
