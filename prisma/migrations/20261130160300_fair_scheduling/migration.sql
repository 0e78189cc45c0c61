-- Fairness between tenants. Operators cap the best priority a tenant may use (1 = any); the
-- database refuses a job better than its tenant's cap. The scheduler reads a window of each
-- tenant's waiting jobs through the index below, so one tenant's backlog never hides another's.
ALTER TABLE "tenants" ADD COLUMN "max_priority" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_max_priority_check" CHECK ("max_priority" BETWEEN 1 AND 10);

CREATE FUNCTION "jobs_priority_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cap INTEGER;
BEGIN
    SELECT "max_priority" INTO cap FROM "tenants" WHERE "id" = NEW."tenant_id";
    IF NEW."priority" < cap THEN
        RAISE EXCEPTION 'priority % is better than tenant %''s highest allowed priority %', NEW."priority", NEW."tenant_id", cap USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "jobs_priority_guard" BEFORE INSERT OR UPDATE OF "priority" ON "jobs"
    FOR EACH ROW EXECUTE FUNCTION "jobs_priority_guard"();

-- exactly the jobs a cycle may place, per tenant in scheduling order (billing- and suspension-blocked
-- jobs are not in it, so a tenant's blocked backlog costs a cycle nothing)
CREATE INDEX "jobs_schedulable_idx" ON "jobs"("tenant_id", "priority", "submitted_at")
    WHERE "status" = 'queued' OR ("status" = 'blocked' AND "block_reason" = 'quota');
