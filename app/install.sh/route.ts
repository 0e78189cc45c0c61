import { installScript } from "@/lib/agent-install/install-script";
import { env } from "@/lib/env";

// `curl -fsSL https://CONTROL_PLANE/install.sh | sudo sh -s -- --key gf_…` on a GPU node.
export function GET(request: Request) {
  const url = env().NEXTAUTH_URL ?? new URL(request.url).origin;
  return new Response(installScript(url), { headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store" } });
}
