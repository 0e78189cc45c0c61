import "server-only";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import type { Prisma } from "@/lib/generated/prisma/client";
import { REDFISH_FAILURES } from "@/lib/redfish/errors";
import { openSecret } from "@/lib/settings/secret-box";
import { settingsKey } from "@/lib/settings/settings";
import { oneOf } from "@/lib/vocabulary";
import type { BmcJson } from "./schemas";

// Nodes' BMCs: stored by operators (the password sealed with the settings key, the node's id bound
// into the ciphertext), read back without the password by operators only, opened into a Redfish
// target by the control plane's own workers. A tenant, an agent or anyone else never reaches any
// of it: the use cases and queries of lib/bmc assert an operator before they read or write.

/** What discovery found, as node_bmcs.discovered stores it. */
export interface Discovered {
  system?: string;
  manager?: string;
  virtual_media?: string;
  virtual_media_on?: "System" | "Manager";
  power_state?: string | null;
  manufacturer?: string | null;
  model?: string | null;
  auth?: "session" | "basic";
}

/** The additional data bound into a BMC password's ciphertext: it opens for this node's row only. */
export const sealName = (nodeId: string) => `node_bmcs.password:${nodeId}`;

export const bmcSelect = {
  nodeId: true,
  url: true,
  username: true,
  passwordCiphertext: true,
  verifyTls: true,
  caPem: true,
  systemId: true,
  discovered: true,
  lastContactAt: true,
  lastErrorKind: true,
  lastError: true,
  lastErrorAt: true,
  updatedAt: true,
  updatedBy: true,
} as const;
export type BmcRow = Prisma.NodeBmcGetPayload<{ select: typeof bmcSelect }>;

function readable(row: BmcRow): boolean {
  const key = settingsKey();
  if (!key) return false;
  try {
    openSecret(key, sealName(row.nodeId), row.passwordCiphertext);
    return true;
  } catch {
    return false;
  }
}

export function bmcJson(row: BmcRow): BmcJson {
  const d = row.discovered as Discovered | null;
  return {
    node_id: row.nodeId,
    url: row.url,
    username: row.username,
    verify_tls: row.verifyTls,
    ca_pem_set: row.caPem !== null,
    system_id: row.systemId,
    password_readable: readable(row),
    last_contact_at: row.lastContactAt?.toISOString() ?? null,
    last_error:
      row.lastErrorKind && row.lastError && row.lastErrorAt
        ? {
            kind: oneOf(REDFISH_FAILURES, row.lastErrorKind, "node_bmcs.last_error_kind"),
            message: row.lastError,
            at: row.lastErrorAt.toISOString(),
          }
        : null,
    discovered: d && Object.keys(d).length ? d : null,
    updated_at: row.updatedAt.toISOString(),
    updated_by: row.updatedBy,
  };
}

export async function nodeOrThrow(nodeId: string) {
  const node = await db().node.findUnique({ where: { id: nodeId }, select: { id: true, hostname: true, clusterId: true } });
  if (!node) throw notFound("Node");
  return node;
}
