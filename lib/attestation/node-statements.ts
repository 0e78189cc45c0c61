import { statement } from "@/lib/db/statement";

// Node lookups of the attestation and handover routes (lib/db/statement.ts).

/** The node ($1) if it is in the cluster $2. */
export const NODE_OF_AGENT = statement("attestation.node-of-agent", {
  params: ["uuid", "uuid"],
  columns: { id: "uuid", cluster_id: "uuid", hostname: "text", status: "text", status_before_offline: "text?" },
  text: `SELECT id, cluster_id, hostname, status, status_before_offline FROM nodes WHERE id = $1::uuid AND cluster_id = $2::uuid`,
});

/** The node ($1), for operators. */
export const NODE_BY_ID = statement("attestation.node-by-id", {
  params: ["uuid"],
  columns: { id: "uuid", cluster_id: "uuid", hostname: "text", status: "text", status_before_offline: "text?" },
  text: `SELECT id, cluster_id, hostname, status, status_before_offline FROM nodes WHERE id = $1::uuid`,
});
