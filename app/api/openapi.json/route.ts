import { platform } from "@/lib/api/contracts";
import { openApiDocumentJson } from "@/lib/api/openapi";
import { route } from "@/lib/http/route";

// Built once per process (the contracts cannot change while it runs) and revalidated by ETag.
export const GET = route(platform.openapi, async ({ request, send }) => {
  const { body, etag } = openApiDocumentJson();
  const headers = { etag, "cache-control": "public, max-age=300", "content-type": "application/json" };
  if (request.headers.get("if-none-match") === etag) return send(304, null, headers);
  return send(200, body, headers);
});
