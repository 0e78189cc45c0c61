import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { bundleFile } from "@/lib/agent-install/bundles";
import { AppError, unavailable } from "@/lib/errors";
import { errorResponse } from "@/lib/http/error-response";
import { admitDownload } from "@/lib/http/public-download";
import { logger } from "@/lib/logger";

// The bundles installers download, each with its Ed25519 signature: <kind>-linux-<arch>.tar.gz and
// <kind>-linux-<arch>.tar.gz.sig (lib/agent-install/bundles).
export async function GET(request: Request, context: { params: Promise<{ file: string }> }) {
  try {
    await admitDownload(request, "getAgentBundle", 60);
  } catch (e) {
    return errorResponse(e);
  }
  const { file } = await context.params;
  let found;
  try {
    found = await bundleFile(file);
  } catch (e) {
    logger.error("bundle could not be built", { file, error: String(e) });
    return errorResponse(unavailable("The bundle cannot be built on this deployment"));
  }
  if (found.kind === "not_found") return errorResponse(new AppError("not_found", found.message));
  if (found.kind === "unsigned")
    return errorResponse(
      unavailable(
        "This control plane has no key to sign bundles with: set BUNDLE_SIGNING_KEY or BUNDLE_SIGNING_KEY_FILE (an Ed25519 private key)",
      ),
    );
  if (found.kind === "signature")
    return new Response(new Uint8Array(found.signature), {
      headers: { "content-type": "application/octet-stream", "content-length": "64", "cache-control": "no-store" },
    });
  const { bundle } = found;
  return new Response(Readable.toWeb(createReadStream(bundle.file)) as ReadableStream, {
    headers: {
      "content-type": "application/gzip",
      "content-length": String(bundle.bytes),
      "content-disposition": `attachment; filename="${bundle.name}"`,
    },
  });
}
