import { billing } from "@/lib/api/contracts";
import { balanceOf, listTransactions } from "@/lib/billing/ledger";
import { route } from "@/lib/http/route";

export const GET = route(billing.listTransactions, async ({ principal, params, query, reply }) => {
  const { data, nextCursor } = await listTransactions(principal, params.id, query);
  return reply(200, { data, next_cursor: nextCursor, balance_cents: await balanceOf(params.id) });
});
