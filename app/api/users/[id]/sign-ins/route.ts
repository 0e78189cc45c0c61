import { listSignIns } from "@/lib/accounts/sign-in-history";
import { accounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const GET = route(accounts.listSignIns, async ({ principal, params, query, reply }) => {
  const { data, nextCursor } = await listSignIns(principal, params.id, { limit: query.limit, before: query.cursor });
  return reply(200, { data, next_cursor: nextCursor });
});
