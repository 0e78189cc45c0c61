import { providers } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { jobBurst } from "@/lib/providers/queries";

export const GET = route(providers.getJobBurst, async ({ principal, params, reply }) =>
  reply(200, { burst: await jobBurst(principal, params.id) }),
);
