import { billing } from "@/lib/api/contracts";
import { balanceOf, depositFunds, ledgerEntryJson } from "@/lib/billing/ledger";
import { route } from "@/lib/http/route";

export const POST = route(billing.createDeposit, async ({ actor, params, body, reply }) => {
  const e = await depositFunds(actor, params.id, body.amount_cents, body.description);
  const balance = await balanceOf(params.id);
  return reply(201, { entry: ledgerEntryJson(e, null), balance_cents: balance });
});
