import { statement } from "@/lib/db/statement";

/** Nodes with evidence on record (the latest verdict of each, with its event log), newest first, at most $1. */
export const CAPTURABLE_NODES = statement("attestation.capturable-nodes", {
  params: ["int4"],
  columns: { node_id: "uuid", hostname: "text", cluster_name: "text", result: "text", created_at: "timestamptz", attestation_id: "uuid" },
  text: `
    SELECT v.node_id, n.hostname, c.name AS cluster_name, v.result, v.created_at, v.id AS attestation_id
      FROM (SELECT DISTINCT ON (a.node_id) a.node_id, a.result, a.created_at, a.id FROM attestations a
              JOIN attestation_evidence e ON e.attestation_id = a.id AND e.event_log IS NOT NULL
             ORDER BY a.node_id, a.created_at DESC) v
      JOIN nodes n ON n.id = v.node_id JOIN clusters c ON c.id = n.cluster_id
     ORDER BY v.created_at DESC LIMIT $1::int4`,
});
