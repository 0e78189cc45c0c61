import { platform } from "@/lib/api/contracts";
import { checkDatabase } from "@/lib/db/health";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

export const GET = route(platform.health, async ({ reply }) => {
  const ok = await checkDatabase();
  return ok ? reply(200, { status: "ok", db: "ok" }) : reply(503, { status: "degraded", db: "error" });
});
