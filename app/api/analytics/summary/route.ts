import { marketing } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { siteAnalytics } from "@/lib/marketing/site";

export const GET = route(marketing.getSiteAnalytics, async ({ query }) => json(200, await siteAnalytics(query.days)));
