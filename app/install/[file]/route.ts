import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { agentBundle, BUNDLE_ARCH, type BundleKind } from "@/lib/agent-install/agent-bundle";
import { AppError, unavailable } from "@/lib/errors";
import { errorResponse } from "@/lib/http/error-response";
import { admitDownload } from "@/lib/http/public-download";
import { logger } from "@/lib/logger";

// The self-contained agent the installer downloads (and its checksum): agent-linux-<arch>.tar.gz, or
// the Slurm bridge (install.sh --slurm-bridge): slurm-bridge-linux-<arch>.tar.gz.
export async function GET(request: Request, context: { params: Promise<{ file: string }> }) {
  try {
    await admitDownload(request, "getAgentBundle", 60);
  } catch (e) {
    return errorResponse(e);
  }
  const { file } = await context.params;
  const m = /^(agent|slurm-bridge)-linux-([a-z0-9_]+)\.tar\.gz(\.sha256)?$/.exec(file);
  if (!m)
    return errorResponse(new AppError("not_found", "Bundles are named agent-linux-<arch>.tar.gz or slurm-bridge-linux-<arch>.tar.gz"));
  if (m[2] !== BUNDLE_ARCH)
    return errorResponse(new AppError("not_found", `This control plane serves the agent for ${BUNDLE_ARCH} nodes, not ${m[2]}`));
  let bundle;
  try {
    bundle = await agentBundle(m[1] as BundleKind);
  } catch (e) {
    logger.error("agent bundle could not be built", { error: String(e) });
    return errorResponse(unavailable("The agent bundle cannot be built on this deployment"));
  }
  if (m[3])
    return new Response(`${bundle.sha256}  ${bundle.name}\n`, {
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });
  return new Response(Readable.toWeb(createReadStream(bundle.file)) as ReadableStream, {
    headers: {
      "content-type": "application/gzip",
      "content-length": String(bundle.bytes),
      "content-disposition": `attachment; filename="${bundle.name}"`,
    },
  });
}
