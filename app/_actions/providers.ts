"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { emitEvent } from "@/lib/background/emit";
import { gpuMappingBody } from "@/lib/providers/schemas";
import { setGpuMapping } from "@/lib/providers/set-gpu-mapping";
import { burstSettingsBody } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

const burstForm = z.object({ id: z.uuid(), burst: burstSettingsBody });

/** The price cap is typed in dollars per GPU-hour ("4.50") and stored in cents; anything else is left for the schema to refuse. */
function centsFrom(v: string | undefined): number | null | undefined | string {
  if (v === undefined || v.trim() === "") return null;
  const m = /^\s*\$?\s*(\d{1,7})(?:\.(\d{1,2}))?\s*$/.exec(v);
  if (!m) return v;
  return Number(m[1]) * 100 + Number((m[2] ?? "0").padEnd(2, "0"));
}

/** Burst on or off and its price cap: an operator for any tenant, a tenant admin for its own. */
export const updateBurstAction = serverAction(
  {
    schema: burstForm,
    fromForm: (f) => ({
      id: formText(f, "id"),
      burst: {
        enabled: f.get("enabled") === "on",
        ...(f.has("allowed_field") ? { allowed: f.get("allowed") === "on" } : {}),
        max_price_cents_per_gpu_hour: centsFrom(formText(f, "max_price")),
      },
    }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: ["/admin/tenants", "/dashboard/billing", "/admin/providers"],
  },
  async (actor, { id, burst }) => {
    const t = await updateTenant(actor, id, { burst });
    return {
      message: t.burstEnabled
        ? `Burst is on: waiting jobs may run on provider capacity up to $${((t.burstMaxPriceCentsPerGpuHour ?? 0) / 100).toFixed(2)} per GPU-hour.`
        : "Burst is off: jobs wait for this fleet's own capacity.",
    };
  },
);

export const setGpuMappingAction = serverAction(
  {
    schema: gpuMappingBody,
    fromForm: (f) => ({
      provider: formText(f, "provider"),
      provider_gpu_type: formText(f, "provider_gpu_type") ?? "",
      gpu_type: formText(f, "gpu_type") ?? null,
    }),
    access: ["operator"],
    revalidate: ["/admin/providers"],
  },
  async (actor, input) => {
    const m = await setGpuMapping(actor, input);
    return { message: m.gpu_type ? `“${m.provider_gpu_type}” now counts as ${m.gpu_type}.` : `“${m.provider_gpu_type}” is never used.` };
  },
);

export const refreshOffersAction = serverAction(
  { schema: z.object({}), fromForm: () => ({}), access: ["operator"], revalidate: ["/admin/providers"] },
  async (actor) => {
    await emitEvent("providers/offers.refresh.requested", { requested_by: actor.principal.label });
    return { message: "Refresh requested: offers update within a few seconds." };
  },
);
