import { tenants } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { tenantJson } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

export const GET = route(tenants.getTenant, async ({ principal, params }) =>
  json(200, { tenant: tenantJson(await getTenantOrThrow(principal, params.id)) }),
);

export const PATCH = route(tenants.updateTenant, async ({ actor, params, body }) =>
  json(200, { tenant: tenantJson(await updateTenant(actor, params.id, body)) }),
);
