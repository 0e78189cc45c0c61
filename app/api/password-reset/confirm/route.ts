import { confirmPasswordReset } from "@/lib/accounts/password-reset";
import { accounts } from "@/lib/api/contracts";
import { clientIp, route } from "@/lib/http/route";

export const POST = route(accounts.confirmPasswordReset, async ({ request, body, reply }) => {
  const { email } = await confirmPasswordReset(body.token, body.password, { address: clientIp(request.headers) });
  return reply(200, { status: "password_reset" as const, email });
});
