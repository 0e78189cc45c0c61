import "server-only";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { bmcAddressPolicy } from "@/lib/env";
import { conflict } from "@/lib/errors";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { RedfishTarget } from "@/lib/redfish/client";
import type { RedfishError } from "@/lib/redfish/errors";
import { openSecret } from "@/lib/settings/secret-box";
import { settingsKey } from "@/lib/settings/settings";
import { bmcSelect, nodeOrThrow, sealName, type Discovered } from "./bmc-json";
import { RECORD_CONTACT_FENCED, RECORD_FAILURE_FENCED } from "./statements";

export interface OpenedBmc {
  node: { id: string; hostname: string; clusterId: string };
  target: RedfishTarget;
  systemId: string | null;
  discovered: Discovered;
}

/**
 * The node's BMC with its password opened, for the control plane's own Redfish calls (power,
 * provisioning). Refused (409) when the node has none or its password cannot be opened here.
 */
export async function openBmc(nodeId: string): Promise<OpenedBmc> {
  const node = await nodeOrThrow(nodeId);
  const row = await db().nodeBmc.findUnique({ where: { nodeId }, select: bmcSelect });
  if (!row) throw conflict("This node has no BMC: store one first (PUT /api/nodes/{id}/bmc)", [{ path: "bmc", message: "not configured" }]);
  const key = settingsKey();
  let password: string;
  try {
    if (!key) throw new Error("no key");
    password = openSecret(key, sealName(nodeId), row.passwordCiphertext);
  } catch {
    throw conflict("The stored BMC password cannot be opened with this installation's SETTINGS_ENCRYPTION_KEY: store the BMC again", [
      { path: "bmc.password", message: "unreadable with this key" },
    ]);
  }
  return {
    node,
    target: { url: row.url, username: row.username, password, verifyTls: row.verifyTls, caPem: row.caPem, policy: bmcAddressPolicy() },
    systemId: row.systemId,
    discovered: (row.discovered as Discovered | null) ?? {},
  };
}

/** A contact that worked: when, and what it found (merged into what was known); fenced when a lease holder's token is given. */
export async function recordBmcContact(nodeId: string, found: Discovered, leaseToken?: string): Promise<void> {
  const known = Object.fromEntries(Object.entries(found).filter(([, v]) => v !== undefined));
  if (leaseToken) {
    await run(pool(), RECORD_CONTACT_FENCED, [nodeId, leaseToken, known]);
    return;
  }
  const row = await db().nodeBmc.findUnique({ where: { nodeId }, select: { discovered: true } });
  if (!row) return;
  await db().nodeBmc.updateMany({
    where: { nodeId },
    data: {
      discovered: { ...(row.discovered as Discovered | null), ...known } as Prisma.InputJsonObject,
      lastContactAt: new Date(),
      lastErrorKind: null,
      lastError: null,
      lastErrorAt: null,
    },
  });
}

/** A contact that failed, and how; fenced when a lease holder's token is given. */
export async function recordBmcFailure(nodeId: string, e: RedfishError, leaseToken?: string): Promise<void> {
  if (leaseToken) {
    await run(pool(), RECORD_FAILURE_FENCED, [nodeId, leaseToken, e.kind, e.message]);
    return;
  }
  await db().nodeBmc.updateMany({
    where: { nodeId },
    data: { lastErrorKind: e.kind, lastError: e.message.slice(0, 2000), lastErrorAt: new Date() },
  });
}
