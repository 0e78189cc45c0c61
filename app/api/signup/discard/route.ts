import { accounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { discardSignup } from "@/lib/signup/discard-signup";

export const POST = route(accounts.discardSignup, async ({ body, reply }) => {
  await discardSignup(body.token);
  return reply(200, { status: "discarded" as const });
});
