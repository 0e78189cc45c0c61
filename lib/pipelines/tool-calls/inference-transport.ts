import "server-only";
import { Readable } from "node:stream";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { isAppError } from "@/lib/errors";
import { gateway } from "@/lib/gateway/gateway";
import { ENDPOINT_BY_NAME } from "../statements";

// How an inference step reaches a tenant's endpoint: through the inference gateway's balancer in
// this process (least outstanding requests over replicas in rotation, one retry on another
// replica before any byte came back), as the tenant itself, without a key. Only replicas whose
// node's agent reported a published port are called, at the node's address; the gateway records
// the call in the endpoint's per-minute figures like any other request.

interface InferenceRequest {
  tenantId: string;
  endpoint: string;
  path: string;
  method: string;
  body: unknown;
  signal: AbortSignal;
}

export interface InferenceTransport {
  send(req: InferenceRequest): Promise<Response>;
}

/** No replica could take the call now (none in rotation, or none answered): the step retries later. */
export class NoReplica extends Error {}

export const gatewayTransport: InferenceTransport = {
  async send(req) {
    const rows = await run(pool(), ENDPOINT_BY_NAME, [req.tenantId, req.endpoint]);
    if (!rows[0]) throw new NoReplica(`endpoint “${req.endpoint}” does not exist (any more)`);
    const g = await gateway();
    const adm = await g.admitTenant(rows[0].id, req.tenantId);
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const body = Buffer.from(hasBody ? JSON.stringify(req.body ?? {}) : "");
    let upstream;
    try {
      upstream = await g.forward(adm, {
        method: req.method,
        path: req.path.startsWith("/") ? req.path : `/${req.path}`,
        headers: hasBody ? { "content-type": "application/json" } : {},
        body,
        clientAddress: "pipeline",
        proto: "http",
      });
    } catch (e) {
      if (!isAppError(e)) {
        adm.release();
        throw e;
      }
      g.recordRefusal(adm, e);
      throw new NoReplica(`endpoint “${req.endpoint}”: ${e.message}`);
    }
    req.signal.addEventListener("abort", () => upstream.abort(), { once: true });
    const headers = new Headers();
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : String(v));
    return new Response(Readable.toWeb(upstream.body) as ReadableStream<Uint8Array>, { status: upstream.status, headers });
  },
};
