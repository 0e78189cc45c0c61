-- A provider instance is rented whole and dedicated to one job: the provider charges every GPU it
-- has, whatever the job uses. Billing the job for the GPUs it held only (review of issue 30) sold a
-- 1-GPU job an 8-GPU instance at an eighth of its cost. The job's segment now pays the whole
-- instance: per GPU-hour of the job, the instance's price × its GPUs ÷ the job's (at least the
-- provider's cost plus the markup, never less), and the cost follows the same.
CREATE OR REPLACE FUNCTION "usage_events_provider_price"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pi RECORD;
    held INTEGER;
BEGIN
    IF NEW."job_id" IS NULL OR NEW."covered_by_reservation_id" IS NOT NULL THEN RETURN NEW; END IF;
    SELECT i."provider", i."offer_id", i."price_cents_per_gpu_hour", i."cost_cents_per_gpu_hour", i."gpu_count" INTO pi
      FROM "job_placements" p JOIN "provider_instances" i ON i."node_id" = ANY(p."node_ids")
     WHERE p."job_id" = NEW."job_id" AND p."attempt" = NEW."attempt"
     LIMIT 1;
    IF NOT FOUND THEN RETURN NEW; END IF;
    held := GREATEST(1, NEW."gpu_count");
    NEW."provider" := pi."provider";
    NEW."offer_id" := pi."offer_id";
    NEW."cents_per_hour" := ceil(pi."price_cents_per_gpu_hour"::numeric * GREATEST(pi."gpu_count", held) / held);
    NEW."amount_cents" := round(NEW."gpu_seconds"::numeric * pi."price_cents_per_gpu_hour" * GREATEST(pi."gpu_count", held) / held / 3600);
    NEW."cost_cents_per_hour" := ceil(pi."cost_cents_per_gpu_hour"::numeric * GREATEST(pi."gpu_count", held) / held);
    NEW."cost_cents" := round(NEW."gpu_seconds"::numeric * pi."cost_cents_per_gpu_hour" * GREATEST(pi."gpu_count", held) / held / 3600);
    RETURN NEW;
END $$;
