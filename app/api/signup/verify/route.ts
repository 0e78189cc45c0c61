import { accounts } from "@/lib/api/contracts";
import { clientIp, route } from "@/lib/http/route";
import { verifyEmail } from "@/lib/signup/verify-email";

export const POST = route(accounts.verifyEmail, async ({ request, body, reply }) => {
  const { email } = await verifyEmail(body, { address: clientIp(request.headers) });
  return reply(200, { status: "verified" as const, email });
});
