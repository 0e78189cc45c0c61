import "server-only";
import { lookup } from "node:dns/promises";
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { Readable } from "node:stream";
import type { Cidr } from "@/lib/http/client-address";
import { outboundAddressProblem } from "@/lib/http/public-address";

// How a pipeline's http step reaches its host: the name is resolved once, every address it
// resolves to must be public (or in a network the operator allowed, TOOL_CALL_ALLOWED_NETWORKS),
// and the connection goes to the address that was checked — pinned, so a name that answers
// differently the second time (DNS rebinding) cannot turn an allowed host into the metadata
// service or the control plane's own database. TLS still checks the certificate against the name.
// Redirects are answers, not instructions: never followed.

export class OutboundRefused extends Error {}

/** The address a URL's host resolves to, checked; throws OutboundRefused when any of its addresses may not be called. */
export async function resolveDestination(url: URL, allowed: readonly Cidr[]): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : await lookup(host, { all: true, verbatim: true }).catch((e: NodeJS.ErrnoException) => {
        throw new OutboundRefused(`request.url: ${host} does not resolve (${e.code ?? e.message})`);
      });
  if (addresses.length === 0) throw new OutboundRefused(`request.url: ${host} does not resolve`);
  // one forbidden answer refuses the name: a resolver that mixes them would otherwise pick for us
  for (const a of addresses) {
    const problem = outboundAddressProblem(a.address, allowed);
    if (problem)
      throw new OutboundRefused(
        `request.url: ${host} resolves to ${problem}; tool calls reach public addresses only unless the operator allows the network (TOOL_CALL_ALLOWED_NETWORKS)`,
      );
  }
  return { address: addresses[0]!.address, family: addresses[0]!.family as 4 | 6 };
}

/** Sends the request to the checked address only; the answer as a web Response (its body streamed). */
export function pinnedRequest(
  url: URL,
  destination: { address: string; family: 4 | 6 },
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === "https:";
    const req = (secure ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: init.method,
        headers: {
          host: url.host,
          ...init.headers,
          ...(init.body !== undefined ? { "content-length": Buffer.byteLength(init.body) } : {}),
        },
        // the checked address, whatever the name answers now (in either of lookup's two answering forms)
        lookup: (_h, o, cb) => {
          const answer = cb as (e: null, a: string | Array<{ address: string; family: number }>, f?: number) => void;
          if ((o as { all?: boolean }).all) answer(null, [{ address: destination.address, family: destination.family }]);
          else answer(null, destination.address, destination.family);
        },
        ...(secure && !isIP(url.hostname) ? { servername: url.hostname } : {}),
        agent: false,
        signal: init.signal,
      },
      (res) => {
        const status = res.statusCode ?? 502;
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers as IncomingHttpHeaders)) {
          if (v === undefined) continue;
          for (const x of Array.isArray(v) ? v : [v]) headers.append(k, x);
        }
        const noBody = init.method === "HEAD" || status === 204 || status === 304 || status < 200 || status > 599;
        if (noBody) res.resume();
        resolve(
          new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status: status < 200 || status > 599 ? 502 : status,
            headers,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}
