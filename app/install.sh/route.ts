import { installScript } from "@/lib/agent-install/install-script";
import { env } from "@/lib/env";
import { validationFailed } from "@/lib/errors";
import { errorResponse } from "@/lib/http/error-response";
import { admitDownload } from "@/lib/http/public-download";

// `curl -fsSL https://CONTROL_PLANE/install.sh | sudo sh -s -- --key gf_…` on a GPU node.
export async function GET(request: Request) {
  try {
    await admitDownload(request, "getInstallScript", 120);
    const url = env().NEXTAUTH_URL ?? new URL(request.url).origin;
    let script: string;
    try {
      script = installScript(url);
    } catch {
      // only reachable without NEXTAUTH_URL, from a Host header no installer could use
      throw validationFailed([{ path: "host", message: "The Host header is not an address the installer can use; set NEXTAUTH_URL" }]);
    }
    return new Response(script, { headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
