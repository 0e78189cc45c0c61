import { statement } from "@/lib/db/statement";
import { fence } from "@/lib/fleet/lease-fence";

// What a provisioning worker writes on the node's BMC row, fenced by the node's lease like every
// other write it makes (lib/fleet/node-lease.ts): a worker that lost the lease cannot rewrite what
// the BMC was last seen doing.

/** The contact worked: $3 merged into what was discovered (node $1, lease token $2). */
export const RECORD_CONTACT_FENCED = statement("bmc.record-contact-fenced", {
  params: ["uuid", "int8", "jsonb"],
  columns: {},
  text: `
    UPDATE node_bmcs SET discovered = discovered || $3::jsonb, last_contact_at = now(), last_error_kind = NULL, last_error = NULL, last_error_at = NULL
     WHERE node_id = $1::uuid AND ${fence(1, 2)}`,
});

/** The contact failed: $3 its kind, $4 what happened (node $1, lease token $2). */
export const RECORD_FAILURE_FENCED = statement("bmc.record-failure-fenced", {
  params: ["uuid", "int8", "text", "text"],
  columns: {},
  text: `
    UPDATE node_bmcs SET last_error_kind = $3::text, last_error = left($4::text, 2000), last_error_at = now()
     WHERE node_id = $1::uuid AND ${fence(1, 2)}`,
});
