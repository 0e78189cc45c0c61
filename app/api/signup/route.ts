import { accounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { signUp } from "@/lib/signup/sign-up";

export const POST = route(accounts.signUp, async ({ body, reply }) => {
  await signUp(body);
  return reply(202, { status: "verification_sent" as const });
});
