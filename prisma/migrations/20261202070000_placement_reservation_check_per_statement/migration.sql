-- A scheduling cycle inserts its placements in one statement (2,500 in bench:scheduler's cycle),
-- and the check that each names exactly the reservation holding its nodes ran once per row: a
-- lookup of the job's tenant and two calls of covering_reservation, 34 ms of the cycle. It is now
-- one check per statement over the inserted rows, with the same answer as covering_reservation
-- (the reservation of the job's tenant that holds the placement's nodes now, none, or a refusal
-- when the nodes mix a reservation's with others) and the same messages.
CREATE OR REPLACE FUNCTION "job_placements_reservation_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    bad RECORD;
BEGIN
    WITH placed AS (
        SELECT p."job_id", p."attempt", p."reservation_id", p."node_ids", j."tenant_id"
          FROM new_rows p JOIN "jobs" j ON j."id" = p."job_id"
    ), held_now AS (
        SELECT rn."node_id", rn."tenant_id", rn."reservation_id" FROM "reservation_nodes" rn
         WHERE rn."live" AND rn."starts_at" <= now() AND rn."ends_at" > now()
    ), covered AS (
        SELECT p."job_id", p."attempt",
               array_agg(DISTINCT h."reservation_id") FILTER (WHERE h."node_id" IS NOT NULL) AS held,
               count(DISTINCT h."node_id") AS inside, count(DISTINCT x.node_id) AS nodes
          FROM placed p CROSS JOIN LATERAL unnest(p."node_ids") AS x(node_id)
          LEFT JOIN held_now h ON h."node_id" = x.node_id AND h."tenant_id" = p."tenant_id"
         GROUP BY p."job_id", p."attempt"
    )
    SELECT p."job_id", p."reservation_id" AS named, c.held[1] AS holder,
           (c.inside > 0 AND (cardinality(c.held) > 1 OR c.inside <> c.nodes)) AS mixed INTO bad
      FROM placed p JOIN covered c ON c."job_id" = p."job_id" AND c."attempt" = p."attempt"
     WHERE (c.inside > 0 AND (cardinality(c.held) > 1 OR c.inside <> c.nodes))
        OR p."reservation_id" IS DISTINCT FROM c.held[1]
     LIMIT 1;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF bad.mixed THEN
        RAISE EXCEPTION 'a placement may not mix nodes of a reservation with other nodes' USING ERRCODE = '23514';
    END IF;
    RAISE EXCEPTION 'placement of job % names reservation %, but its nodes are held by %', bad.job_id, bad.named, bad.holder USING ERRCODE = '23514';
END $$;
DROP TRIGGER "job_placements_reservation_check" ON "job_placements";
CREATE TRIGGER "job_placements_reservation_check" AFTER INSERT ON "job_placements"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "job_placements_reservation_check"();

