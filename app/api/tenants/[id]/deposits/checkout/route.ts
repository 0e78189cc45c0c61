import { billing } from "@/lib/api/contracts";
import { cardDepositJson, startCardDeposit } from "@/lib/billing/card-deposits";
import { route } from "@/lib/http/route";

export const POST = route(billing.createCardDepositCheckout, async ({ actor, params, body, reply }) => {
  const s = await startCardDeposit(actor, params.id, body.amount_cents);
  return reply(201, { url: s.url, session_id: s.session_id, deposit: cardDepositJson(s.deposit) });
});
