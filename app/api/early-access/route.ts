import { marketing } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { signUpEarlyAccess } from "@/lib/marketing/site";

// The same answer whether or not the address was listed already: the form must not tell a
// stranger who has signed up.
export const POST = route(marketing.createEarlyAccess, async ({ body, reply }) => {
  await signUpEarlyAccess(body.email);
  return reply(201, { early_access: { email: body.email } });
});
