import { tenants } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { getTenantOrThrow, tenantFigures } from "@/lib/tenants/queries";
import { tenantJson } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

export const GET = route(tenants.getTenant, async ({ principal, params }) => {
  const tenant = await getTenantOrThrow(principal, params.id);
  return json(200, { tenant: { ...tenantJson(tenant), ...(await tenantFigures(tenant.id)) } });
});

export const PATCH = route(tenants.updateTenant, async ({ actor, params, body }) =>
  json(200, { tenant: tenantJson(await updateTenant(actor, params.id, body)) }),
);
