-- Cycles woken by events read only the waiting work of GPU types with a free GPU (issue 33,
-- lib/scheduler/cycle-facts.ts): each tenant's window of each such type, in the order the fair
-- window reads it, straight from this index instead of walking every waiting job of the tenant
-- (10,000 of them waiting for H100 nodes made each submit for a free L4 GPU read them all).
CREATE INDEX "jobs_schedulable_type_idx" ON "jobs"("tenant_id", "gpu_type", "priority", "submitted_at")
    WHERE "status" = 'queued' OR ("status" = 'blocked' AND "block_reason" = 'quota');
