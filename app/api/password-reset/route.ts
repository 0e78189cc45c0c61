import { requestPasswordReset } from "@/lib/accounts/password-reset";
import { accounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";

export const POST = route(accounts.requestPasswordReset, async ({ body, reply }) => {
  await requestPasswordReset(body.email);
  return reply(202, { status: "reset_requested" as const });
});
