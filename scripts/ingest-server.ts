// `npm run ingest`: the agents' hot paths — POST /api/clusters/metrics, node heartbeats and the
// log chunks of jobs, pods and endpoint replicas — on a plain node:http server. The handlers, contracts, key auth, validation and error shapes are the
// app's own (imported from app/api); only Next's router and renderer are left out, which cost
// about 5 ms of CPU per request. Run it beside the app and send /api/clusters/* and the log routes
// to it (agents: GPUFORGE_INGEST_URL); everything else stays on the app. INGEST_PORT (3001) sets the port.
import http from "node:http";
import { POST as heartbeat } from "@/app/api/clusters/nodes/[id]/heartbeat/route";
import { POST as metrics } from "@/app/api/clusters/metrics/route";
import { POST as replicaLogs } from "@/app/api/endpoints/[id]/replicas/[replica_id]/logs/route";
import { POST as jobLogs } from "@/app/api/jobs/[id]/logs/route";
import { POST as podLogs } from "@/app/api/pods/[id]/logs/route";
import { GET as health } from "@/app/api/health/route";
import { fleet, operations, workloads } from "@/lib/api/contracts";
import { attachPrincipal, resolvePrincipal } from "@/lib/auth/resolve-principal";
import { env, proxyTrust } from "@/lib/env";
import { AppError, isAppError, unauthorized } from "@/lib/errors";
import { clientAddress, withPeerAddress } from "@/lib/http/client-address";
import { errorResponse } from "@/lib/http/error-response";
import { sendResponse, toNextRequest } from "@/lib/http/node-bridge";
import { guardAddress, recordFailedAuth } from "@/lib/http/rate-limit";
import { readWithinLimit } from "@/lib/http/read-body";
import { route } from "@/lib/http/route";
import { logger } from "@/lib/logger";
import { metricsExposition } from "@/lib/observability/exposition";
import { assertOperatorOrToken } from "@/lib/observability/operator-or-token";
import { applyServerTimeouts, SERVER_TIMEOUTS, type ServerTimeouts } from "./lib/server-timeouts";

// This process's own figures (requests, ingested samples and rejections, runtime); the fleet's
// gauges are the app's to serve.
const processMetricsOnly = route(operations.metrics, async ({ machineToken, principal, send }) => {
  assertOperatorOrToken(principal, machineToken, "METRICS_TOKEN");
  const { contentType, body } = await metricsExposition({ fleet: false });
  return send(200, body, { "content-type": contentType, "cache-control": "no-store" });
});

type Handler = (request: ReturnType<typeof toNextRequest>, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

// each route's own body limit: nothing larger is ever read off a socket
const routes: Array<{ method: string; pattern: RegExp; handler: Handler; params?: string[]; bodyLimit?: () => number }> = [
  {
    method: "POST",
    pattern: /^\/api\/clusters\/metrics$/,
    handler: metrics as Handler,
    bodyLimit: () => fleet.postMetrics.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES,
  },
  {
    method: "POST",
    pattern: /^\/api\/clusters\/nodes\/([^/]+)\/heartbeat$/,
    handler: heartbeat as Handler,
    params: ["id"],
    bodyLimit: () => fleet.heartbeat.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES,
  },
  {
    method: "POST",
    pattern: /^\/api\/jobs\/([^/]+)\/logs$/,
    handler: jobLogs as Handler,
    params: ["id"],
    bodyLimit: () => workloads.appendJobLogs.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES,
  },
  {
    method: "POST",
    pattern: /^\/api\/pods\/([^/]+)\/logs$/,
    handler: podLogs as Handler,
    params: ["id"],
    bodyLimit: () => workloads.appendPodLogs.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES,
  },
  {
    method: "POST",
    pattern: /^\/api\/endpoints\/([^/]+)\/replicas\/([^/]+)\/logs$/,
    handler: replicaLogs as Handler,
    params: ["id", "replica_id"],
    bodyLimit: () => workloads.appendReplicaLogs.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES,
  },
  { method: "GET", pattern: /^\/api\/health$/, handler: health as Handler },
  { method: "GET", pattern: /^\/api\/metrics$/, handler: processMetricsOnly as Handler },
];

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * The caller is checked before a byte of its body is read: a request without a valid key is
 * answered 401 and its connection closed, so unauthenticated clients cannot make the server buffer
 * megabytes; an address that keeps failing is answered 429 before the database is asked. Header,
 * body and idle timeouts bound how long any client may hold a connection.
 */
export function createIngestServer(origin: string, timeouts: ServerTimeouts = SERVER_TIMEOUTS) {
  // Node checks those timeouts on this interval (30 s by default, longer than the timeouts themselves)
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1_000, timeouts.headersTimeoutMs) }, async (req, res) => {
    try {
      req.headers["x-forwarded-for"] = withPeerAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress);
      const address = clientAddress(req.headers["x-forwarded-for"], proxyTrust());
      const path = (req.url ?? "/").split("?")[0]!;
      const match = routes.map((r) => ({ r, m: r.method === req.method ? r.pattern.exec(path) : null })).find((x) => x.m);
      const values = (match?.r.params ?? []).map((_, i) => safeDecode(match!.m![i + 1]!));
      if (!match || values.includes(null)) {
        await sendResponse(
          res,
          errorResponse(
            new AppError(
              "not_found",
              "The ingest server serves POST /api/clusters/metrics, node heartbeats, job, pod and replica log chunks, GET /api/health and GET /api/metrics only",
            ),
          ),
        );
        return;
      }
      const params = Object.fromEntries((match.r.params ?? []).map((name, i) => [name, values[i]!]));
      let principal = null;
      if (match.r.bodyLimit) {
        await guardAddress(address, true);
        principal = await (req.headers.authorization ? resolvePrincipal(toNextRequest(req, origin, null)) : Promise.resolve(null))
          .then((p) => p ?? Promise.reject(unauthorized("Send 'Authorization: Bearer <agent key>'")))
          .catch(async (e: unknown) => {
            if (isAppError(e) && e.code === "unauthorized") await recordFailedAuth(address);
            throw e;
          });
      }
      const body = match.r.bodyLimit ? await readWithinLimit(req, req.headers["content-length"], match.r.bodyLimit()) : null;
      const request = toNextRequest(req, origin, body);
      if (principal) attachPrincipal(request, principal);
      await sendResponse(res, await match.r.handler(request, { params: Promise.resolve(params) }));
    } catch (e) {
      // Handlers map their own errors; what lands here was refused before one ran (a body over the
      // limit: answer, then drop the rest of it) or is a broken connection. Same error shapes as the app.
      if (res.headersSent) {
        logger.error("ingest server failed after answering", { error: String(e) });
        return;
      }
      if (isAppError(e)) res.setHeader("connection", "close");
      await sendResponse(res, errorResponse(e)).catch(() => res.destroy());
    }
  });
  applyServerTimeouts(server, timeouts);
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.INGEST_PORT ?? 3001);
  const server = createIngestServer(`http://127.0.0.1:${port}`);
  server.listen(port, () => console.log(`[ingest] agents' metrics and heartbeats on http://localhost:${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // started by a harness with an IPC channel (scripts/lib/next-server.ts): when that parent dies, so does this server
  process.on("disconnect", () => process.exit(0));
}
