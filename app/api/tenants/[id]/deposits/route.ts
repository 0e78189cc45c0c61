import { billing } from "@/lib/api/contracts";
import { balanceOf, depositFunds } from "@/lib/billing/ledger";
import { json, route } from "@/lib/http/route";

export const POST = route(billing.createDeposit, async ({ actor, params, body }) => {
  const e = await depositFunds(actor, params.id, body.amount_cents, body.description);
  const balance = await balanceOf(params.id);
  return json(201, {
    entry: { id: e.id.toString(), kind: "deposit", amount_cents: Number(e.amountCents), balance_after_cents: null, description: e.description, invoice_id: null, created_by: e.createdBy, created_at: e.createdAt.toISOString() },
    balance_cents: balance,
  });
});
