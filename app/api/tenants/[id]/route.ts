import { tenants } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { tenantDetail } from "@/lib/tenants/queries";
import { tenantJson } from "@/lib/tenants/schemas";
import { updateTenant } from "@/lib/tenants/update-tenant";

export const GET = route(tenants.getTenant, async ({ principal, params, reply }) =>
  reply(200, { tenant: await tenantDetail(principal, params.id) }),
);

export const PATCH = route(tenants.updateTenant, async ({ actor, params, body, reply }) =>
  reply(200, { tenant: tenantJson(await updateTenant(actor, params.id, body)) }),
);
