import { marketing } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { signUpEarlyAccess } from "@/lib/marketing/site";

export const POST = route(marketing.createEarlyAccess, async ({ body }) => {
  const { created } = await signUpEarlyAccess(body.email);
  return json(201, { early_access: { email: body.email, created } });
});
