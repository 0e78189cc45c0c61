import { marketing } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { siteAnalytics } from "@/lib/marketing/site";

export const GET = route(marketing.getSiteAnalytics, async ({ query, reply }) => reply(200, await siteAnalytics(query.days)));
