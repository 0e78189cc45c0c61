import { accounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { verifyEmail } from "@/lib/signup/verify-email";

export const POST = route(accounts.verifyEmail, async ({ body, reply }) => {
  const { email } = await verifyEmail(body.token);
  return reply(200, { status: "verified" as const, email });
});
