import { billing } from "@/lib/api/contracts";
import { billingSummary } from "@/lib/billing/usage";
import { route } from "@/lib/http/route";

export const GET = route(billing.billingSummary, async ({ reply }) => reply(200, await billingSummary()));
