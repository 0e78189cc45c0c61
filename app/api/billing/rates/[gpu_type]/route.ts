import { billing } from "@/lib/api/contracts";
import { setRate } from "@/lib/billing/rates";
import { route } from "@/lib/http/route";

export const PUT = route(billing.setRate, async ({ actor, params, body, reply }) =>
  reply(200, { rate: await setRate(actor, params.gpu_type, body.cents_per_hour) }),
);
