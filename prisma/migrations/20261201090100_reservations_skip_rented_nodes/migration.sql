-- A node rented from a GPU provider (issue 30) is one instance dedicated to one job of one tenant
-- at a time and ends when idle: it is no one's to book (review of issue 30: another tenant's
-- reservation took a rented node that was "free" between jobs). The fleet's shape the capacity
-- queries and reservations read leaves rented nodes out, and the database refuses to hold one,
-- whatever path writes the holding.
CREATE OR REPLACE VIEW "public_api"."nodes" AS
    SELECT n.id AS node_id, n.cluster_id, c.name AS cluster_name, c.region, n.pod, n.rack, n.status, g.gpu_type, g.gpus, g.healthy
      FROM (SELECT x.node_id, min(x.gpu_type) AS gpu_type, count(*)::int AS gpus, count(*) FILTER (WHERE x.status = 'available')::int AS healthy
              FROM gpus x WHERE x.missing_since IS NULL GROUP BY x.node_id) g
      JOIN nodes n ON n.id = g.node_id JOIN clusters c ON c.id = n.cluster_id
     WHERE NOT EXISTS (SELECT 1 FROM provider_instances i WHERE i.node_id = n.id);

CREATE FUNCTION "reservation_nodes_not_rented"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."live" AND EXISTS (SELECT 1 FROM "provider_instances" WHERE "node_id" = NEW."node_id") THEN
        RAISE EXCEPTION 'node % is rented from a GPU provider: it cannot be reserved', NEW."node_id" USING ERRCODE = '23P01';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "reservation_nodes_not_rented" BEFORE INSERT OR UPDATE OF node_id, live ON "reservation_nodes"
    FOR EACH ROW EXECUTE FUNCTION "reservation_nodes_not_rented"();
