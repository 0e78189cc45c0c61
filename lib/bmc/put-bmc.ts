import "server-only";
import { X509Certificate } from "node:crypto";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { bmcAddressPolicy } from "@/lib/env";
import { unavailable, validationFailed } from "@/lib/errors";
import { bmcAddressProblem, literalAddress } from "@/lib/redfish/address-policy";
import { sealSecret } from "@/lib/settings/secret-box";
import { settingsKey } from "@/lib/settings/settings";
import { bmcJson, bmcSelect, nodeOrThrow, sealName } from "./bmc-json";
import { bmcOrigin, type BmcJson, type PutBmcBody } from "./schemas";

/** Stores (or replaces) the node's BMC. A new address or login forgets what the old one discovered. */
export async function putBmc(actor: Actor, nodeId: string, body: PutBmcBody): Promise<{ bmc: BmcJson; created: boolean }> {
  assertOperator(actor.principal);
  const origin = bmcOrigin(body.url);
  if ("problem" in origin) throw validationFailed([{ path: "url", message: origin.problem }]);
  const host = literalAddress(new URL(origin.origin).hostname);
  const problem = host ? bmcAddressProblem(host, bmcAddressPolicy()) : null;
  if (problem) throw validationFailed([{ path: "url", message: problem }]);
  if (body.ca_pem !== undefined) {
    try {
      new X509Certificate(body.ca_pem);
    } catch {
      throw validationFailed([{ path: "ca_pem", message: "Not a PEM certificate (-----BEGIN CERTIFICATE-----…)" }]);
    }
  }
  const key = settingsKey();
  if (!key)
    throw unavailable(
      "This installation has no key to encrypt BMC passwords with: set SETTINGS_ENCRYPTION_KEY (32 random bytes) at deploy time",
    );
  await nodeOrThrow(nodeId);
  const verifyTls = body.verify_tls ?? origin.origin.startsWith("https://");
  const data = {
    url: origin.origin,
    username: body.username,
    passwordCiphertext: sealSecret(key, sealName(nodeId), body.password),
    verifyTls,
    caPem: body.ca_pem ?? null,
    systemId: body.system_id ?? null,
    discovered: {},
    lastContactAt: null,
    lastErrorKind: null,
    lastError: null,
    lastErrorAt: null,
    updatedBy: actor.principal.label,
  };
  return db().$transaction(async (tx) => {
    const existed = await tx.nodeBmc.findUnique({ where: { nodeId }, select: { nodeId: true } });
    const row = await tx.nodeBmc.upsert({ where: { nodeId }, create: { nodeId, ...data }, update: data, select: bmcSelect });
    await recordAudit(tx, actor, {
      action: existed ? "node.bmc_replaced" : "node.bmc_set",
      targetType: "node",
      targetId: nodeId,
      details: {
        url: data.url,
        username: data.username,
        verify_tls: verifyTls,
        ca_pem: body.ca_pem ? "set" : "none",
        system_id: data.systemId,
        password: "set (encrypted)",
      },
    });
    return { bmc: bmcJson(row), created: !existed };
  });
}
