-- Who submitted a job, when a person did (a browser session): a tenant member may cancel the jobs
-- they submitted, and only those (lib/jobs/job-permissions.ts). Jobs submitted with an API key or
-- by the platform (pipelines, retries) have none; a deleted user leaves their jobs unowned.
ALTER TABLE "jobs" ADD COLUMN "submitted_by" UUID;
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_submitted_by_fkey" FOREIGN KEY ("submitted_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
CREATE INDEX "jobs_submitted_by_idx" ON "jobs" ("submitted_by") WHERE "submitted_by" IS NOT NULL;
