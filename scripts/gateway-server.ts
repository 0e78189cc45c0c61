// `npm run gateway`: the inference gateway on its own process — tenants' calls to their endpoints,
// `ANY /v1/endpoints/{endpoint_id}/{path}`, proxied to replicas (lib/gateway). The same Gateway the
// app serves at the same paths, on plain node:http without Next's router and renderer; run as many
// as the traffic needs behind a load balancer (each keeps its own routing table, probes and counters,
// and adds its per-minute figures to the database). GATEWAY_PORT (3003) sets the port; it also
// answers GET /api/health, and GET /api/metrics (its own process figures) to operators and METRICS_TOKEN.
import http from "node:http";
import { GET as health } from "@/app/api/health/route";
import { operations } from "@/lib/api/contracts";
import { assertNodeNetworks, env } from "@/lib/env";
import { gateway, stopGateway, type Gateway } from "@/lib/gateway/gateway";
import { serveGatewayRequest } from "@/lib/gateway/node-edge";
import { withPeerAddress } from "@/lib/http/client-address";
import { errorResponse } from "@/lib/http/error-response";
import { sendResponse, toNextRequest } from "@/lib/http/node-bridge";
import { route } from "@/lib/http/route";
import { logger } from "@/lib/logger";
import { metricsExposition } from "@/lib/observability/exposition";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";
import { applyServerTimeouts, SERVER_TIMEOUTS, type ServerTimeouts } from "./lib/server-timeouts";

const processMetricsOnly = route(operations.metrics, async ({ machineToken, principal, send }) => {
  assertOperatorOrToken(principal, machineToken, "METRICS_TOKEN");
  const { contentType, body } = await metricsExposition({ fleet: false });
  return send(200, body, { "content-type": contentType, "cache-control": "no-store" });
});

type Handler = (request: ReturnType<typeof toNextRequest>, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

export function createGatewayServer(g: Gateway, origin: string, timeouts: ServerTimeouts = SERVER_TIMEOUTS) {
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1_000, timeouts.headersTimeoutMs) }, (req, res) => {
    req.headers["x-forwarded-for"] = withPeerAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress);
    const path = (req.url ?? "/").split("?")[0];
    const own: Handler | null =
      req.method === "GET" && path === "/api/health"
        ? (health as Handler)
        : req.method === "GET" && path === "/api/metrics"
          ? (processMetricsOnly as Handler)
          : null;
    const served = own
      ? own(toNextRequest(req, origin, null), { params: Promise.resolve({}) }).then((r) => sendResponse(res, r))
      : serveGatewayRequest(g, req, res);
    served.catch((e: unknown) => {
      logger.error("gateway server failed", { error: String(e) });
      if (res.headersSent) res.destroy();
      else void sendResponse(res, errorResponse(e)).catch(() => res.destroy());
    });
  });
  applyServerTimeouts(server, timeouts);
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    // it connects to nodes' addresses: production names their networks
    assertNodeNetworks(env());
  } catch (e) {
    console.error(`[gateway] refusing to start: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(78);
  }
  const port = Number(process.env.GATEWAY_PORT ?? 3003);
  const g = await gateway();
  const server = createGatewayServer(g, `http://127.0.0.1:${port}`);
  server.listen(port, () => console.log(`[gateway] tenants' calls to their endpoints on http://localhost:${port}/v1/endpoints/{id}/…`));
  const stop = () => server.close(() => void stopGateway().finally(() => process.exit(0)));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
