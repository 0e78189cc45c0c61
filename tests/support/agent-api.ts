import http from "node:http";
import type { AddressInfo } from "node:net";
import type { NextRequest } from "next/server";
import { sendResponse, toNextRequest } from "@/lib/http/node-bridge";

// The app's agent-facing route handlers (register, heartbeat, metrics, exits, logs, outputs) on a
// plain node:http server, as the ingest server serves its own: the same contracts, auth and writes
// as under Next. Tests whose agents (simulated provider instances) must reach a control plane use it.

type Handler = (request: NextRequest, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

export async function startAgentApi() {
  const nodes = await import("@/app/api/clusters/nodes/route");
  const heartbeat = await import("@/app/api/clusters/nodes/[id]/heartbeat/route");
  const metrics = await import("@/app/api/clusters/metrics/route");
  const job = await import("@/app/api/jobs/[id]/route");
  const logs = await import("@/app/api/jobs/[id]/logs/route");
  const outputs = await import("@/app/api/jobs/[id]/outputs/route");
  const routes: Array<{ method: string; pattern: RegExp; handler: Handler }> = [
    { method: "POST", pattern: /^\/api\/clusters\/nodes$/, handler: nodes.POST as Handler },
    { method: "POST", pattern: /^\/api\/clusters\/nodes\/([^/]+)\/heartbeat$/, handler: heartbeat.POST as Handler },
    { method: "POST", pattern: /^\/api\/clusters\/metrics$/, handler: metrics.POST as Handler },
    { method: "PATCH", pattern: /^\/api\/jobs\/([^/]+)$/, handler: job.PATCH as Handler },
    { method: "POST", pattern: /^\/api\/jobs\/([^/]+)\/logs$/, handler: logs.POST as Handler },
    { method: "POST", pattern: /^\/api\/jobs\/([^/]+)\/outputs$/, handler: outputs.POST as Handler },
  ];
  let origin = "";
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const r = routes.map((x) => ({ x, m: x.method === req.method ? x.pattern.exec(path) : null })).find((y) => y.m);
      if (!r) {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: "not_found", message: "not served here" } }));
        return;
      }
      const request = toNextRequest(req, origin, chunks.length ? Buffer.concat(chunks) : Buffer.alloc(0));
      const params: Record<string, string> = r.m![1] ? { id: decodeURIComponent(r.m![1]) } : {};
      const response = await r.x.handler(request, { params: Promise.resolve(params) });
      await sendResponse(res, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
