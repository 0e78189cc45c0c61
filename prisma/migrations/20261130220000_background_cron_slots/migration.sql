-- The in-process background driver runs each sweep on its schedule in every app instance; the
-- advisory lock keeps two instances from running it at the same time, but not one after the
-- other for the same due time (instances whose clocks differ, or one that finishes before the
-- other's timer fires). Each due time is now claimed here, under that lock, by whoever comes
-- first: one row per job, moving forward only.
CREATE TABLE "background_cron_slots" (
    "job_id" TEXT NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "background_cron_slots_pkey" PRIMARY KEY ("job_id"),
    CONSTRAINT "background_cron_slots_job_id_check" CHECK (length("job_id") BETWEEN 1 AND 200)
);
