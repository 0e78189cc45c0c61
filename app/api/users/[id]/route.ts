import { tenants } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { userJson } from "@/lib/users/schemas";
import { updateUser } from "@/lib/users/update-user";

export const PATCH = route(tenants.updateUser, async ({ actor, params, body, reply }) =>
  reply(200, { user: userJson(await updateUser(actor, params.id, body)) }),
);
