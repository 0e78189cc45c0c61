import { billing } from "@/lib/api/contracts";
import { listCardDeposits } from "@/lib/billing/card-deposits";
import { route } from "@/lib/http/route";

export const GET = route(billing.listCardDeposits, async ({ principal, params, query, reply }) => {
  const { data, nextCursor } = await listCardDeposits(principal, params.id, { limit: query.limit, before: query.cursor });
  return reply(200, { data, next_cursor: nextCursor });
});
