import { serviceAccounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createServiceAccount, listServiceAccounts } from "@/lib/service-accounts/service-accounts";

export const GET = route(serviceAccounts.listServiceAccounts, async ({ principal, query, reply }) =>
  reply(200, { data: await listServiceAccounts(principal, query) }),
);

export const POST = route(serviceAccounts.createServiceAccount, async ({ actor, body, reply }) =>
  reply(201, { service_account: await createServiceAccount(actor, body) }),
);
