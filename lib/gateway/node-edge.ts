import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { proxyTrust } from "@/lib/env";
import { AppError, isAppError } from "@/lib/errors";
import { clientAddress } from "@/lib/http/client-address";
import { errorResponse } from "@/lib/http/error-response";
import { sendResponse } from "@/lib/http/node-bridge";
import { guardAddress, recordFailedAuth } from "@/lib/http/rate-limit";
import { readWithinLimit } from "@/lib/http/read-body";
import { logger } from "@/lib/logger";
import type { Gateway } from "./gateway";

// The gateway on plain node:http (`npm run gateway`): the key is checked before a byte of the body
// is read; the body is read within GATEWAY_MAX_BODY_BYTES; the replica's answer is piped to the
// client as it arrives, and a client that goes away stops the replica's work.

const PATH = /^\/v1\/endpoints\/([^/?#]+)(\/[^?#]*)?(\?.*)?$/;

export async function serveGatewayRequest(g: Gateway, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const forwarded = req.headers["x-forwarded-for"];
  const address = clientAddress(Array.isArray(forwarded) ? forwarded.join(", ") : forwarded, proxyTrust());
  const m = PATH.exec(req.url ?? "");
  if (!m) {
    await sendResponse(res, errorResponse(new AppError("not_found", "The gateway serves /v1/endpoints/{endpoint_id}/{path}")));
    return;
  }
  let adm;
  try {
    await guardAddress(address, true);
    adm = await g.admit(m[1]!, req.headers.authorization).catch(async (e: unknown) => {
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
    const body = await readWithinLimit(req, req.headers["content-length"], g.opts.maxBodyBytes);
    upstream = await g.forward(adm, {
      method: req.method ?? "GET",
      path: `${m[2] ?? "/"}${m[3] ?? ""}`,
      headers: req.headers,
      body,
      clientAddress: address,
      proto: "http",
    });
  } catch (e) {
    if (isAppError(e)) g.recordRefusal(adm, e);
    else logger.error("gateway request failed", { error: String(e) });
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
