import { platform } from "@/lib/api/contracts";
import { checkDatabase } from "@/lib/db/health";
import { json, route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

export const GET = route(platform.health, async () => {
  const ok = await checkDatabase();
  return ok ? json(200, { status: "ok", db: "ok" }) : json(503, { status: "degraded", db: "error" });
});
