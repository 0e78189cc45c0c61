import { tenants } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createUser } from "@/lib/users/create-user";
import { listUsers } from "@/lib/users/queries";
import { userJson } from "@/lib/users/schemas";

export const POST = route(tenants.createUser, async ({ actor, body, reply }) =>
  reply(201, { user: userJson(await createUser(actor, body)) }),
);

export const GET = route(tenants.listUsers, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listUsers(principal, query);
  return reply(200, { data: data.map(userJson), next_cursor: nextCursor });
});
