// `npm run ingest`: the agents' hot paths — POST /api/clusters/metrics and node heartbeats — on a
// plain node:http server. The handlers, contracts, key auth, validation and error shapes are the
// app's own (imported from app/api); only Next's router and renderer are left out, which cost
// about 5 ms of CPU per request. Run it beside the app and send /api/clusters/* to it (agents:
// GPUFORGE_INGEST_URL); everything else stays on the app. INGEST_PORT (3001) sets the port.
import http from "node:http";
import { POST as heartbeat } from "@/app/api/clusters/nodes/[id]/heartbeat/route";
import { POST as metrics } from "@/app/api/clusters/metrics/route";
import { GET as health } from "@/app/api/health/route";
import { fleet } from "@/lib/api/contracts";
import { env } from "@/lib/env";
import { AppError, isAppError } from "@/lib/errors";
import { errorResponse } from "@/lib/http/error-response";
import { sendResponse, toNextRequest } from "@/lib/http/node-bridge";
import { readWithinLimit } from "@/lib/http/read-body";
import { logger } from "@/lib/logger";

type Handler = (request: ReturnType<typeof toNextRequest>, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

const metricsBodyLimit = fleet.postMetrics.bodyLimitBytes ?? 0;

const routes: Array<{ method: string; pattern: RegExp; handler: Handler; param?: string }> = [
  { method: "POST", pattern: /^\/api\/clusters\/metrics$/, handler: metrics as Handler },
  { method: "POST", pattern: /^\/api\/clusters\/nodes\/([^/]+)\/heartbeat$/, handler: heartbeat as Handler, param: "id" },
  { method: "GET", pattern: /^\/api\/health$/, handler: health as Handler },
];

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function createIngestServer(origin: string) {
  return http.createServer(async (req, res) => {
    try {
      const path = (req.url ?? "/").split("?")[0]!;
      const match = routes.map((r) => ({ r, m: r.method === req.method ? r.pattern.exec(path) : null })).find((x) => x.m);
      const param = match?.r.param ? safeDecode(match.m![1]!) : "";
      if (!match || param === null) {
        await sendResponse(res, errorResponse(new AppError("not_found", "The ingest server serves POST /api/clusters/metrics and node heartbeats only")));
        return;
      }
      const params = match.r.param ? { [match.r.param]: param } : {};
      // the largest body any route here takes (each route then applies its own limit)
      const body = req.method === "POST" ? await readWithinLimit(req, req.headers["content-length"], Math.max(metricsBodyLimit, env().API_BODY_LIMIT_BYTES)) : null;
      await sendResponse(res, await match.r.handler(toNextRequest(req, origin, body), { params: Promise.resolve(params) }));
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
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.INGEST_PORT ?? 3001);
  const server = createIngestServer(`http://127.0.0.1:${port}`);
  server.keepAliveTimeout = 65_000;
  server.listen(port, () => console.log(`[ingest] agents' metrics and heartbeats on http://localhost:${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
