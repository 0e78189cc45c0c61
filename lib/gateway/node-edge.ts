import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { proxyTrust } from "@/lib/env";
import { AppError, isAppError } from "@/lib/errors";
import { clientAddress } from "@/lib/http/client-address";
import { errorResponse } from "@/lib/http/error-response";
import { sendResponse } from "@/lib/http/node-bridge";
import { guardAddress, recordFailedAuth } from "@/lib/http/rate-limit";
import { logger } from "@/lib/logger";
import type { Admission, Gateway } from "./gateway";
import { GATEWAY_SERVES, parseGatewayPath } from "./gateway-paths";
import { takeRequestBody } from "./request-body";

// The gateway on plain node:http (`npm run gateway`): the key is checked, and the request admitted
// (its key's and its endpoint's slots), before a byte of the body is read; a short body is held so
// it can be sent twice, a long one streams to the replica within GATEWAY_MAX_BODY_BYTES; the
// replica's answer is piped to the client as it arrives, and a client that goes away stops the
// replica's work.

export async function serveGatewayRequest(g: Gateway, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const forwarded = req.headers["x-forwarded-for"];
  const address = clientAddress(Array.isArray(forwarded) ? forwarded.join(", ") : forwarded, proxyTrust());
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const target = parseGatewayPath(q < 0 ? url : url.slice(0, q));
  if (!target) {
    await sendResponse(res, errorResponse(new AppError("not_found", GATEWAY_SERVES)));
    return;
  }
  let adm: Admission;
  try {
    await guardAddress(address, true);
    const admit =
      target.kind === "endpoint"
        ? g.admit(target.id, req.headers.authorization)
        : g.admitPod(target.id, target.port, req.headers.authorization);
    adm = await admit.catch(async (e: unknown) => {
      if (isAppError(e) && e.code === "unauthorized") await recordFailedAuth(address);
      throw e;
    });
  } catch (e) {
    // refused before its body was read: close the connection rather than drain a body we will not read
    res.setHeader("connection", "close");
    return void (await sendResponse(res, errorResponse(e)).catch(() => res.destroy()));
  }
  let upstream;
  try {
    const body = await takeRequestBody(req, req.headers["content-length"], g.opts.maxBodyBytes);
    upstream = await g.forward(adm, {
      method: req.method ?? "GET",
      path: `${target.rest}${q < 0 ? "" : url.slice(q)}`,
      headers: req.headers,
      body,
      clientAddress: address,
      proto: "http",
    });
  } catch (e) {
    if (isAppError(e)) g.recordRefusal(adm, e);
    else {
      adm.release();
      logger.error("gateway request failed", { error: String(e) });
    }
    if (isAppError(e) && e.code === "payload_too_large") res.setHeader("connection", "close");
    return void (await sendResponse(res, errorResponse(e, adm.requestId)).catch(() => res.destroy()));
  }
  res.writeHead(upstream.status, upstream.headers);
  res.flushHeaders();
  res.on("close", () => {
    if (!res.writableFinished) upstream.abort();
  });
  upstream.body.on("error", () => res.destroy());
  upstream.body.pipe(res);
}
