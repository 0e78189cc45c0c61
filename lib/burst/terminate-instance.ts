import "server-only";
import { systemActorFor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { isAppError } from "@/lib/errors";
import { changeNodeStatus } from "@/lib/fleet/change-node-status";
import { logger } from "@/lib/logger";
import { providerAdapter } from "@/lib/providers/registry";
import { isProviderError } from "@/lib/providers/types";
import type { ProviderName } from "@/lib/providers/vocabulary";
import { backOff } from "./records";

const burstActor = systemActorFor("burst");

/**
 * Ends an instance: its node leaves service first (work on it goes back to the queue, its
 * retries untouched), then the provider is asked to terminate it (gone already is fine), then its
 * key stops working. A provider that cannot be reached leaves it `terminating`; the next cycle
 * asks again, and the reconciler catches whatever still runs. Never-joined nodes (no GPUs, no
 * history) are removed; joined ones stay, out of service, with their history.
 */
export async function terminateInstance(instanceId: string, reason: string): Promise<"terminated" | "pending"> {
  const i = await db().providerInstance.findUnique({ where: { id: instanceId } });
  if (!i || i.status === "terminated" || i.status === "failed") return "terminated";
  if (i.status !== "terminating")
    await db().providerInstance.update({
      where: { id: instanceId },
      data: { status: "terminating", terminateRequestedAt: new Date(), failure: i.failure ?? reason },
    });
  if (i.nodeId) await retireNode(i.nodeId, reason);
  const adapter = providerAdapter(i.provider as ProviderName);
  if (i.externalId) {
    if (!adapter) return "pending";
    try {
      await adapter.terminate(i.externalId);
    } catch (e) {
      if (!isProviderError(e)) throw e;
      logger.warn("provider instance could not be terminated yet", { provider: i.provider, instance: i.id, error: e.message });
      if (e.kind === "unavailable" || e.kind === "rate_limited") await backOff(i.provider as ProviderName, e.message, e.retryAfterS);
      return "pending";
    }
  }
  await db().$transaction(async (tx) => {
    await tx.providerInstance.update({ where: { id: instanceId }, data: { status: "terminated", terminatedAt: new Date(), jobId: null } });
    if (i.apiKeyId) await tx.apiKey.updateMany({ where: { id: i.apiKeyId, revokedAt: null }, data: { revokedAt: new Date() } });
  });
  return "terminated";
}

/** The instance's node takes no more work: removed if it never joined, else out of service (maintenance, or quarantined from a state that cannot go to maintenance). */
async function retireNode(nodeId: string, reason: string): Promise<void> {
  const node = await db().node.findUnique({ where: { id: nodeId }, select: { status: true, _count: { select: { gpus: true } } } });
  if (!node) return;
  if (node._count.gpus === 0) {
    await db().$transaction([
      db().apiKey.deleteMany({ where: { nodeId } }),
      db().providerInstance.updateMany({ where: { nodeId }, data: { nodeId: null, apiKeyId: null } }),
      db().node.delete({ where: { id: nodeId } }),
    ]);
    return;
  }
  if (node.status === "maintenance" || node.status === "quarantined") return;
  for (const target of ["maintenance", "quarantined"] as const) {
    try {
      await changeNodeStatus(burstActor, nodeId, target, `provider instance ending: ${reason}`);
      return;
    } catch (e) {
      if (!isAppError(e) || e.code !== "invalid_transition") throw e;
    }
  }
}
