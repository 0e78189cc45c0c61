import "server-only";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { burstSettings, listGpuMappings, listOffers, listProviderInstances, listProviders, marginsByMonth } from "./queries";

/** The operator's providers page: providers, offers with prices and margins, instances, spend, the GPU-type mapping. */
export async function providersPage(p: OperatorPrincipal, filter: { gpu_type?: string }) {
  const monthsBack = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 2, 1));
  const [providers, offers, instances, mappings, margins, tenants] = await Promise.all([
    listProviders(p),
    listOffers(p, filter.gpu_type ? { gpu_type: filter.gpu_type } : {}),
    listProviderInstances(p, {}, 50),
    listGpuMappings(p),
    marginsByMonth(p, monthsBack),
    db().tenant.findMany({
      where: { burstEnabled: true },
      select: { id: true, name: true, burstMaxPriceCentsPerGpuHour: true },
      orderBy: { name: "asc" },
    }),
  ]);
  const names = new Map(
    (
      await db().tenant.findMany({
        where: { id: { in: [...new Set(instances.map((i) => i.tenant_id))] } },
        select: { id: true, name: true },
      })
    ).map((t) => [t.id, t.name]),
  );
  return {
    providers,
    offers: offers.slice(0, 200),
    offerCount: offers.length,
    gpuTypes: [...new Set(offers.map((o) => o.gpu_type).filter((t): t is string => t !== null))].sort(),
    instances: instances.map((i) => ({ ...i, tenant_name: names.get(i.tenant_id) ?? i.tenant_id.slice(0, 8) })),
    mappings,
    margins,
    burstTenants: tenants,
    settings: burstSettings(),
  };
}
