import "server-only";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActorFor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { publicUrl } from "@/lib/platform/public-url";
import { providerAdapter } from "@/lib/providers/registry";
import { startScript } from "@/lib/providers/start-script";
import { isProviderError, ProviderError } from "@/lib/providers/types";
import type { BurstJob, PricedOffer } from "./policy";
import { installationId, instanceName } from "./installation";
import { backOff, clearBackoff, dollars, providerLabel, recordAttempt } from "./records";
import { terminateInstance } from "./terminate-instance";

const burstActor = systemActorFor("burst");

/**
 * Rents the instance claimed for the job (lib/burst/claim-launch.ts wrote its launching row, the
 * job's one live instance, under the spend caps): its node in the provider cluster and a key bound
 * to that node come first, then the provider is asked, with the agent's variables in its own start
 * mechanism and a name the reconciler recognises as this installation's. A refusal records the
 * attempt, backs the provider off when it is the provider's fault (5xx, timeout, 429), and
 * removes what was prepared; a launch whose answer never came is left to the reconciler, which
 * finds the instance by its name.
 */
export async function launchForJob(
  job: BurstJob & { tenantId: string; waitedS: number },
  offer: PricedOffer,
  instance: { id: string; clusterId: string },
  /** the control plane's bundle signing key (public half): the instance's installer checks the agent against it */
  signingKey: string,
): Promise<"launched" | "failed"> {
  const adapter = providerAdapter(offer.provider);
  if (!adapter) {
    await failLaunch(instance.id, new ProviderError(offer.provider, "auth", "the provider is no longer configured"));
    return "failed";
  }
  const clusterId = instance.clusterId;
  const hostname = `${offer.provider}-${instance.id.slice(0, 8)}`;
  const node = await db().node.create({ data: { clusterId, hostname, status: "registered" }, select: { id: true } });
  const { apiKey, key } = await createApiKey(burstActor, {
    name: `burst ${hostname}`,
    scope: "agent",
    cluster_id: clusterId,
    node_id: node.id,
  });
  await db().providerInstance.update({ where: { id: instance.id }, data: { nodeId: node.id, apiKeyId: apiKey.id } });

  const where = `${offer.gpuCount}× ${offer.providerGpuType} on ${providerLabel(offer.provider)} (${offer.region})`;
  const attempt = {
    jobId: job.id,
    tenantId: job.tenantId,
    provider: offer.provider,
    offerId: offer.offerId,
    region: offer.region,
    instanceId: instance.id,
    priceCentsPerGpuHour: offer.priceCentsPerGpuHour,
  };
  try {
    const { externalId } = await adapter.launch({
      name: instanceName(await installationId(), instance.id),
      offer,
      env: { GPUFORGE_URL: publicUrl(), GPUFORGE_AGENT_KEY: key, GPUFORGE_HOSTNAME: hostname },
      startScript: startScript(signingKey),
    });
    await db().providerInstance.update({ where: { id: instance.id }, data: { status: "booting", externalId, launchedAt: new Date() } });
    await clearBackoff(offer.provider);
    await recordAttempt({
      ...attempt,
      outcome: "launched",
      message: `waited ${Math.round(job.waitedS)} s for local capacity; launching ${where} at ${dollars(offer.priceCentsPerGpuHour)}/GPU-hour, as node ${hostname}`,
    });
    return "launched";
  } catch (e) {
    if (!isProviderError(e)) {
      await terminateInstance(instance.id, `launch failed: ${String(e)}`);
      throw e;
    }
    await failLaunch(instance.id, e);
    await recordAttempt({ ...attempt, outcome: outcomeOf(e), message: `${where}: ${e.message}` });
    if (e.kind !== "capacity") await backOff(offer.provider, e.message, e.retryAfterS);
    return "failed";
  }
}

const outcomeOf = (e: ProviderError) =>
  e.kind === "capacity" ? "capacity" : e.kind === "rate_limited" ? "rate_limited" : "provider_error";

/** A launch the provider refused: nothing runs, so the row ends failed and the node and key it was given go. */
async function failLaunch(instanceId: string, e: ProviderError) {
  const i = await db().providerInstance.findUniqueOrThrow({ where: { id: instanceId }, select: { nodeId: true, apiKeyId: true } });
  await db().$transaction([
    db().providerInstance.update({
      where: { id: instanceId },
      data: {
        status: "failed",
        failure: `${e.kind}: ${e.message}`.slice(0, 500),
        terminatedAt: new Date(),
        jobId: null,
        nodeId: null,
        apiKeyId: null,
      },
    }),
    ...(i.apiKeyId ? [db().apiKey.deleteMany({ where: { id: i.apiKeyId } })] : []),
    ...(i.nodeId ? [db().node.deleteMany({ where: { id: i.nodeId } })] : []),
  ]);
}
