import { billing } from "@/lib/api/contracts";
import { billingSummary } from "@/lib/billing/usage";
import { json, route } from "@/lib/http/route";

export const GET = route(billing.billingSummary, async () => json(200, await billingSummary()));
