import { marketing } from "@/lib/api/contracts";
import { clientIp, route } from "@/lib/http/route";
import { trackingRefused } from "@/lib/marketing/privacy";
import { recordPageView } from "@/lib/marketing/site";

export const POST = route(marketing.recordPageView, async ({ request, body, reply }) => {
  if (trackingRefused(request.headers)) return reply(202, { recorded: false });
  await recordPageView(body, {
    ip: clientIp(request.headers),
    userAgent: request.headers.get("user-agent") ?? "",
    host: request.headers.get("host"),
  });
  return reply(202, { recorded: true });
});
