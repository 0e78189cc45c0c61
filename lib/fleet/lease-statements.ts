import { statement } from "@/lib/db/statement";

// The statements of node leases (lib/fleet/node-lease.ts): thin calls of the SQL functions the
// migration 20261201020000_node_workflow_leases defines, where the rules live.

export const ACQUIRE_NODE_LEASE = statement("fleet.acquire-node-lease", {
  params: ["uuid", "text", "uuid?", "text", "int4"],
  columns: { token: "int8", expires_at: "timestamptz" },
  text: `SELECT token, expires_at FROM node_lease_acquire($1::uuid, $2::text, $3::uuid, $4::text, $5::int4)`,
});

export const RENEW_NODE_LEASE = statement("fleet.renew-node-lease", {
  params: ["uuid", "int8", "int4"],
  columns: { expires_at: "timestamptz" },
  text: `SELECT expires_at FROM node_lease_renew($1::uuid, $2::int8, $3::int4)`,
});

export const RELEASE_NODE_LEASE = statement("fleet.release-node-lease", {
  params: ["uuid", "int8"],
  columns: { released: "bool" },
  text: `SELECT node_lease_release($1::uuid, $2::int8) AS released`,
});

export const REVOKE_NODE_LEASE = statement("fleet.revoke-node-lease", {
  params: ["uuid"],
  columns: { token: "int8?" },
  text: `SELECT node_lease_revoke($1::uuid) AS token`,
});

export const FENCE_NODE_LEASE = statement("fleet.fence-node-lease", {
  params: ["uuid", "int8"],
  columns: { token: "int8" },
  text: `SELECT node_lease_fence($1::uuid, $2::int8) AS token`,
});

/** The node's lease row, and whether it is live now. */
export const CURRENT_NODE_LEASE = statement("fleet.current-node-lease", {
  params: ["uuid"],
  columns: {
    token: "int8",
    purpose: "text",
    workflow_id: "uuid?",
    holder: "text",
    acquired_at: "timestamptz",
    renewed_at: "timestamptz",
    expires_at: "timestamptz",
    released_at: "timestamptz?",
    live: "bool",
  },
  text: `
    SELECT token, purpose, workflow_id, holder, acquired_at, renewed_at, expires_at, released_at,
           (released_at IS NULL AND expires_at > clock_timestamp()) AS live
      FROM node_leases WHERE node_id = $1::uuid`,
});
