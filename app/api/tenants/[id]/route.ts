import { tenants } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";
import { tenantJson } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

export const GET = route(tenants.getTenant, async ({ principal, params, reply }) => {
  const tenant = await getTenantOrThrow(principal, params.id);
  return reply(200, { tenant: { ...tenantJson(tenant), ...(await tenantFigures(tenant.id)) } });
});

export const PATCH = route(tenants.updateTenant, async ({ actor, params, body, reply }) =>
  reply(200, { tenant: tenantJson(await updateTenant(actor, params.id, body)) }),
);
