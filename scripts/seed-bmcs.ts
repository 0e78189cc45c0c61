// The demo's BMCs: once the simulator's nodes and their simulated BMCs are up (`npm start`), each
// node's BMC is stored the way an operator stores one (PUT /api/nodes/{id}/bmc): the password sealed
// with the deployment's settings key, bound to its node. The simulated BMCs listen on ports chosen at
// each start, so a node whose stored address changed is stored again; the rest is left as it is.
import { systemActor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { sealName } from "@/lib/bmc/bmc-json";
import { db, disconnectDb } from "@/lib/db/client";
import { decodeKey } from "@/lib/env";
import { sealSecret } from "@/lib/settings/secret-box";
import type { SimBmcEntry } from "../agent/src/sim-bmc-fleet";

export async function seedDemoBmcs(url: string, settingsKey: string, bmcs: readonly SimBmcEntry[]): Promise<number> {
  const key = decodeKey(settingsKey);
  if (!key || bmcs.length === 0) return 0;
  process.env.DATABASE_URL = url;
  const nodes = await db().node.findMany({
    where: { hostname: { in: bmcs.map((b) => b.hostname) } },
    select: { id: true, hostname: true },
  });
  const idOf = new Map(nodes.map((n) => [n.hostname, n.id]));
  let stored = 0;
  for (const b of bmcs) {
    const nodeId = idOf.get(b.hostname);
    if (!nodeId) continue;
    const current = await db().nodeBmc.findUnique({ where: { nodeId }, select: { url: true } });
    if (current?.url === b.url) continue;
    const data = {
      url: b.url,
      username: b.username,
      passwordCiphertext: sealSecret(key, sealName(nodeId), b.password),
      verifyTls: false,
      caPem: null,
      systemId: null,
      discovered: {},
      lastContactAt: null,
      lastErrorKind: null,
      lastError: null,
      lastErrorAt: null,
      updatedBy: "demo simulator",
    };
    await db().$transaction(async (tx) => {
      await tx.nodeBmc.upsert({ where: { nodeId }, create: { nodeId, ...data }, update: data });
      await recordAudit(tx, systemActor, {
        action: current ? "node.bmc_replaced" : "node.bmc_set",
        targetType: "node",
        targetId: nodeId,
        details: { url: b.url, username: b.username, verify_tls: false, password: "set (encrypted)", source: "demo simulator" },
      });
    });
    stored++;
  }
  await disconnectDb();
  return stored;
}
