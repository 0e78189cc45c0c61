import { platform } from "@/lib/api/contracts";
import { buildOpenApiDocument } from "@/lib/api/openapi";
import { json, route } from "@/lib/http/route";

export const GET = route(platform.openapi, async () => json(200, buildOpenApiDocument()));
