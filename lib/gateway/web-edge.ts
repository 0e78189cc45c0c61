import "server-only";
import { Readable } from "node:stream";
import type { IncomingHttpHeaders } from "node:http";
import { isAppError, notFound } from "@/lib/errors";
import { errorResponse } from "@/lib/http/error-response";
import { guardAddress, recordFailedAuth } from "@/lib/http/rate-limit";
import { clientIp } from "@/lib/http/route";
import { gateway, type Admission } from "./gateway";
import { parseGatewayPath } from "./gateway-paths";
import { takeRequestBody } from "./request-body";

// The gateway inside the app (app/v1/endpoints/… and app/v1/pods/…): the same Gateway as `npm run
// gateway`, behind Next's router, admitting a request before it reads its body. The answer is a
// web stream over the replica's body, so server-sent events reach the client as the replica
// writes them.

export async function handleGatewayRequest(request: Request): Promise<Response> {
  const g = await gateway();
  const url = new URL(request.url);
  const target = parseGatewayPath(url.pathname);
  const address = clientIp(request.headers);
  let adm: Admission;
  try {
    if (!target) throw notFound(url.pathname.startsWith("/v1/pods/") ? "Pod port" : "Endpoint");
    await guardAddress(address, true);
    const authorization = request.headers.get("authorization") ?? undefined;
    const admit = target.kind === "endpoint" ? g.admit(target.id, authorization) : g.admitPod(target.id, target.port, authorization);
    adm = await admit.catch(async (e: unknown) => {
      if (isAppError(e) && e.code === "unauthorized") await recordFailedAuth(address);
      throw e;
    });
  } catch (e) {
    return errorResponse(e);
  }
  const headers: IncomingHttpHeaders = {};
  request.headers.forEach((v, k) => (headers[k] = v));
  try {
    const body = request.body
      ? await takeRequestBody(
          request.body as unknown as AsyncIterable<Uint8Array>,
          request.headers.get("content-length"),
          g.opts.maxBodyBytes,
        )
      : Buffer.alloc(0);
    const upstream = await g.forward(adm, {
      method: request.method,
      path: `${target!.rest}${url.search}`,
      headers,
      body,
      clientAddress: address,
      proto: url.protocol.replace(":", ""),
    });
    request.signal.addEventListener("abort", () => upstream.abort(), { once: true });
    const out = new Headers();
    for (const [k, v] of Object.entries(upstream.headers)) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const x of v) out.append(k, x);
      else out.set(k, String(v));
    }
    // nothing between here and the client may buffer or recompress a stream
    if (out.get("content-type")?.startsWith("text/event-stream")) out.set("cache-control", "no-cache, no-transform");
    const noBody = request.method === "HEAD" || upstream.status === 204 || upstream.status === 304;
    if (noBody) upstream.body.resume();
    return new Response(noBody ? null : (Readable.toWeb(upstream.body) as ReadableStream<Uint8Array>), {
      status: upstream.status,
      headers: out,
    });
  } catch (e) {
    if (isAppError(e)) g.recordRefusal(adm, e);
    else adm.release();
    return errorResponse(e, adm.requestId);
  }
}
