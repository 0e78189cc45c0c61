import { billing } from "@/lib/api/contracts";
import { tenantUsage } from "@/lib/billing/usage";
import { json, route } from "@/lib/http/route";

export const GET = route(billing.getUsage, async ({ principal, params, query }) => json(200, await tenantUsage(principal, params.id, query)));
