"use server";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import { quotaWarning } from "@/lib/jobs/job-fit";
import { fleetCapacity } from "@/lib/jobs/queries";
import { createTenant } from "@/lib/tenants/create-tenant";
import { createTenantBody, tenantLimitsBody, updateTenantBody } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

/** Said after saving: a quota larger than the whole fleet is allowed (the fleet may grow) but never usable today. */
async function fleetQuotaWarning(quota: number) {
  const capacity = await fleetCapacity();
  return quotaWarning(
    quota,
    Object.values(capacity).reduce((s, n) => s + n, 0),
  );
}

export const createTenantAction = serverAction(
  {
    schema: createTenantBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      gpu_quota: formInt(f, "gpu_quota"),
      billing_email: formText(f, "billing_email") ?? null,
    }),
    access: ["operator"],
    revalidate: ["/admin/tenants", "/admin"],
  },
  async (actor, input) => {
    const tenant = await createTenant(actor, input);
    const warning = await fleetQuotaWarning(input.gpu_quota);
    return { message: `Tenant “${tenant.name}” created.${warning ? ` Note: ${warning}` : ""}`, data: { id: tenant.id } };
  },
);

const updateTenantForm = z.object({ id: z.uuid(), changes: updateTenantBody });

export const updateTenantAction = serverAction(
  {
    schema: updateTenantForm,
    fromForm: (f) => {
      const changes: Record<string, unknown> = {};
      if (f.has("name")) changes.name = formText(f, "name") ?? "";
      if (f.has("gpu_quota")) changes.gpu_quota = formInt(f, "gpu_quota");
      if (f.has("max_priority")) changes.max_priority = formInt(f, "max_priority");
      if (f.has("billing_email")) changes.billing_email = formText(f, "billing_email") ?? null;
      if (f.has("status")) changes.status = formText(f, "status");
      return { id: formText(f, "id"), changes };
    },
    access: ["operator"],
    revalidate: ["/admin/tenants", "/admin"],
  },
  async (actor, { id, changes }) => {
    const tenant = await updateTenant(actor, id, changes);
    const verb = changes.status === "suspended" ? "suspended" : changes.status === "active" ? "reactivated" : "saved";
    const warning = changes.gpu_quota !== undefined ? await fleetQuotaWarning(changes.gpu_quota) : null;
    return { message: `Tenant “${tenant.name}” ${verb}.${warning ? ` Note: ${warning}` : ""}` };
  },
);

/** An operator raises (or sets) a tenant's limits: pods at once, reservation length and count; an empty field is no limit. */
export const updateTenantLimitsAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), limits: tenantLimitsBody }),
    fromForm: (f) => {
      const nullable = (name: string) => (formText(f, name) === undefined ? null : formInt(f, name));
      return {
        id: formText(f, "id"),
        limits: {
          max_pods: nullable("max_pods"),
          max_reservation_hours: nullable("max_reservation_hours"),
          max_reservations: nullable("max_reservations"),
        },
      };
    },
    access: ["operator"],
    revalidate: ["/admin/tenants"],
  },
  async (actor, input) => {
    const t = await updateTenant(actor, input.id, { limits: input.limits });
    return { message: `Limits of ${t.name} saved.` };
  },
);
