import { tenants } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createTenant } from "@/lib/tenants/create-tenant";
import { listTenants } from "@/lib/tenants/queries";
import { tenantJson } from "@/lib/tenants/schemas";

export const POST = route(tenants.createTenant, async ({ actor, body, reply }) =>
  reply(201, { tenant: tenantJson(await createTenant(actor, body)) }),
);

export const GET = route(tenants.listTenants, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listTenants(principal, query);
  return reply(200, { data: data.map(tenantJson), next_cursor: nextCursor });
});
