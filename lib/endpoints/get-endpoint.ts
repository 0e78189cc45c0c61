import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { endpointInclude } from "./endpoint-json";

/** Which endpoints a caller sees: operators all, a tenant its own; agents see replicas through heartbeats only. */
export function endpointScope(p: Principal) {
  return tenantScope(p, "Agents see the replicas assigned to them through heartbeats");
}

export async function getEndpointOrThrow(p: Principal, id: string) {
  const e = await db().endpoint.findFirst({ where: { id, deletedAt: null, ...endpointScope(p) }, include: endpointInclude });
  if (!e) throw notFound("Endpoint");
  return e;
}
