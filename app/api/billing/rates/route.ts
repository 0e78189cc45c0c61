import { billing } from "@/lib/api/contracts";
import { listRates } from "@/lib/billing/rates";
import { json, route } from "@/lib/http/route";

export const GET = route(billing.listRates, async () => json(200, { data: await listRates() }));
