import "server-only";
import { assertOperator, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { bmcJson, bmcSelect, nodeOrThrow } from "./bmc-json";
import type { BmcJson } from "./schemas";

/** The node's BMC as operators see it (never the password). */
export async function getBmcOrThrow(p: Principal, nodeId: string): Promise<BmcJson> {
  assertOperator(p);
  await nodeOrThrow(nodeId);
  const row = await db().nodeBmc.findUnique({ where: { nodeId }, select: bmcSelect });
  if (!row) throw notFound("BMC");
  return bmcJson(row);
}

/** The node's BMC or null, for pages. */
export async function findBmc(p: Principal, nodeId: string): Promise<BmcJson | null> {
  assertOperator(p);
  const row = await db().nodeBmc.findUnique({ where: { nodeId }, select: bmcSelect });
  return row ? bmcJson(row) : null;
}
