import { billing } from "@/lib/api/contracts";
import { tenantUsage } from "@/lib/billing/usage";
import { route } from "@/lib/http/route";

export const GET = route(billing.getUsage, async ({ principal, params, query, reply }) =>
  reply(200, await tenantUsage(principal, params.id, query)),
);
