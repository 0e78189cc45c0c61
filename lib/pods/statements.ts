import { statement } from "@/lib/db/statement";

// Pods' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/**
 * Where each pod ($1) runs now and what it has cost: its open placement (node, GPUs, published
 * ports, since when its container runs) and every billed segment plus the running one not billed yet.
 */
export const POD_LIVE_FACTS = statement("pods.live-facts", {
  params: ["uuid[]"],
  columns: { id: "text", host: "text?", hostname: "text?", gpu_ids: "text[]?", ports: "jsonb?", running_at: "timestamptz?", cost: "text" },
  text: `SELECT p.id::text, n.address AS host, n.hostname, pl.gpu_ids::text[] AS gpu_ids, pl.ports, pl.running_at,
            (COALESCE((SELECT sum(u.amount_cents) FROM usage_events u WHERE u.pod_id = p.id), 0) + COALESCE(un.cents, 0))::text AS cost
       FROM unnest($1::uuid[]) AS x(id) JOIN pods p ON p.id = x.id
       LEFT JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts AND pl.ended_at IS NULL
       LEFT JOIN nodes n ON n.id = pl.node_id
       LEFT JOIN LATERAL (
         SELECT round(extract(epoch FROM now() - GREATEST(pl.running_at, COALESCE(max(u.ended_at), pl.running_at))) * cardinality(pl.gpu_ids)
                      * COALESCE((SELECT r.cents_per_hour FROM gpu_rates r WHERE r.gpu_type IN (pl.gpu_type, '*') AND r.effective_from <= now()
                                   ORDER BY (r.gpu_type = '*'), r.effective_from DESC LIMIT 1), 0) / 3600.0) AS cents
           FROM usage_events u WHERE pl.running_at IS NOT NULL AND u.pod_id = pl.pod_id AND u.attempt = pl.attempt
       ) un ON true`,
});

/** Where each placement of the pod $1 ran and when, newest first. */
export const POD_PLACEMENTS = statement("pods.placements", {
  params: ["uuid"],
  columns: { attempt: "int4", hostname: "text?", gpu_ids: "text[]", started_at: "timestamptz", running_at: "timestamptz?", ended_at: "timestamptz?", end_status: "text?" },
  text: `SELECT pl.attempt, n.hostname, pl.gpu_ids::text[] AS gpu_ids, pl.started_at, pl.running_at, pl.ended_at, pl.end_status
       FROM pod_placements pl LEFT JOIN nodes n ON n.id = pl.node_id WHERE pl.pod_id = $1 ORDER BY pl.attempt DESC LIMIT 200`,
});
