import { billing } from "@/lib/api/contracts";
import { listRates } from "@/lib/billing/rates";
import { route } from "@/lib/http/route";

export const GET = route(billing.listRates, async ({ reply }) => reply(200, { data: await listRates() }));
