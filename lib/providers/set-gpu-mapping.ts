import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { builtInGpuType } from "./gpu-types";
import type { ProviderName } from "./vocabulary";

/**
 * An operator says what a provider's GPU name is in our vocabulary (or, with null, that it is never
 * used). The cached offers of that name follow at once, so burst and the offers page see the change
 * before the next refresh.
 */
export async function setGpuMapping(actor: Actor, input: { provider: ProviderName; provider_gpu_type: string; gpu_type: string | null }) {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const before = await tx.providerGpuMapping.findUnique({
      where: { provider_providerGpuType: { provider: input.provider, providerGpuType: input.provider_gpu_type } },
      select: { gpuType: true },
    });
    const row = await tx.providerGpuMapping.upsert({
      where: { provider_providerGpuType: { provider: input.provider, providerGpuType: input.provider_gpu_type } },
      create: {
        provider: input.provider,
        providerGpuType: input.provider_gpu_type,
        gpuType: input.gpu_type,
        updatedBy: actor.principal.label,
      },
      update: { gpuType: input.gpu_type, updatedBy: actor.principal.label, updatedAt: new Date() },
    });
    const offers = await tx.providerOffer.updateMany({
      where: { provider: input.provider, providerGpuType: input.provider_gpu_type },
      data: { gpuType: input.gpu_type },
    });
    await recordAudit(tx, actor, {
      action: "provider.gpu_mapping_set",
      targetType: "provider",
      targetId: input.provider,
      details: {
        provider_gpu_type: input.provider_gpu_type,
        gpu_type: input.gpu_type,
        before: before?.gpuType ?? builtInGpuType(input.provider_gpu_type),
        offers_remapped: offers.count,
      },
    });
    return {
      provider: input.provider,
      provider_gpu_type: row.providerGpuType,
      gpu_type: row.gpuType,
      source: "operator" as const,
      updated_by: row.updatedBy,
    };
  });
}

/** Back to the built-in mapping for that provider name (cached offers follow at once). */
export async function clearGpuMapping(actor: Actor, input: { provider: ProviderName; provider_gpu_type: string }) {
  assertOperator(actor.principal);
  const builtIn = builtInGpuType(input.provider_gpu_type);
  return db().$transaction(async (tx) => {
    const gone = await tx.providerGpuMapping.deleteMany({ where: { provider: input.provider, providerGpuType: input.provider_gpu_type } });
    await tx.providerOffer.updateMany({
      where: { provider: input.provider, providerGpuType: input.provider_gpu_type },
      data: { gpuType: builtIn },
    });
    if (gone.count)
      await recordAudit(tx, actor, {
        action: "provider.gpu_mapping_cleared",
        targetType: "provider",
        targetId: input.provider,
        details: { provider_gpu_type: input.provider_gpu_type, gpu_type: builtIn },
      });
    return {
      provider: input.provider,
      provider_gpu_type: input.provider_gpu_type,
      gpu_type: builtIn,
      source: "built-in" as const,
      updated_by: null,
    };
  });
}
