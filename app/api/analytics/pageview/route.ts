import { marketing } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { trackingRefused } from "@/lib/marketing/privacy";
import { recordPageView } from "@/lib/marketing/site";

export const POST = route(marketing.recordPageView, async ({ request, body }) => {
  if (trackingRefused(request.headers)) return json(202, { recorded: false });
  await recordPageView(body, {
    ip: request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || request.headers.get("x-real-ip") || "local",
    userAgent: request.headers.get("user-agent") ?? "",
    host: request.headers.get("host"),
  });
  return json(202, { recorded: true });
});
