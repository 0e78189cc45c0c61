import { serviceAccounts } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { disableServiceAccount } from "@/lib/service-accounts/service-accounts";

export const DELETE = route(serviceAccounts.disableServiceAccount, async ({ actor, params, reply }) =>
  reply(200, { service_account: await disableServiceAccount(actor, params.id) }),
);
