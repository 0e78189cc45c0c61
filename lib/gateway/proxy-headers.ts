import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { WORKLOAD_ACCESS_HEADER } from "@/lib/fleet/workload-access";

// What passes the gateway in either direction, pure. Hop-by-hop headers (RFC 9110 §7.6.1, and any
// the Connection header names) never pass: they describe one connection, and forwarding them is
// how requests get smuggled and connections confused. The caller's credentials and cookies stay at
// the gateway (a replica never sees a tenant's key); the body is forwarded with its exact length
// (chunked only when the client streamed it without one), never with the client's own framing.
// What the gateway adds of its own (x-gpuforge-*, the placement's access secret among them) no
// client can send: every x-gpuforge-* header of the client's is dropped first.

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "http2-settings",
]);
const NEVER_FORWARDED = new Set([
  "authorization",
  "cookie",
  "host",
  "content-length",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "forwarded",
]);

// What a replica may not say on the control plane's behalf: the gateway answers on the control
// plane's own origin (/v1/endpoints/… in the app), so a replica's cookies would be set for that
// origin (a tenant's model could plant or overwrite the console's session cookies), and its
// origin-wide policies (HSTS, Alt-Svc, Clear-Site-Data) would bind the console. They never pass.
const NEVER_RETURNED = new Set([
  "set-cookie",
  "set-cookie2",
  "clear-site-data",
  "strict-transport-security",
  "alt-svc",
  WORKLOAD_ACCESS_HEADER,
]);

function named(connection: string | string[] | undefined): Set<string> {
  const v = Array.isArray(connection) ? connection.join(",") : (connection ?? "");
  return new Set(
    v
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** Headers for the request to the replica. */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  ctx: {
    host: string;
    /** null: a streamed body of unknown length (sent chunked) */
    bodyLength: number | null;
    clientAddress: string;
    proto: string;
    requestId: string;
    endpointId?: string;
    podId?: string;
    /** what the node's access guard asks of this placement's requests */
    accessSecret: string;
  },
): OutgoingHttpHeaders {
  const drop = named(incoming.connection);
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(incoming)) {
    const key = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(key) || NEVER_FORWARDED.has(key) || drop.has(key) || key.startsWith("x-gpuforge-")) continue;
    out[key] = v;
  }
  out.host = ctx.host;
  if (ctx.bodyLength !== null) out["content-length"] = String(ctx.bodyLength);
  out["x-forwarded-for"] = ctx.clientAddress;
  out["x-forwarded-proto"] = ctx.proto;
  out["x-request-id"] = ctx.requestId;
  if (ctx.endpointId) out["x-gpuforge-endpoint"] = ctx.endpointId;
  if (ctx.podId) out["x-gpuforge-pod"] = ctx.podId;
  out[WORKLOAD_ACCESS_HEADER] = ctx.accessSecret;
  return out;
}

/** Headers of the replica's answer, for the client. */
export function clientResponseHeaders(upstream: IncomingHttpHeaders, ctx: { replicaId?: string; requestId: string }): OutgoingHttpHeaders {
  const drop = named(upstream.connection);
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(upstream)) {
    const key = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(key) || NEVER_RETURNED.has(key) || drop.has(key)) continue;
    out[key] = v;
  }
  // a browser that renders a replica's answer renders it in an opaque origin of its own, never the console's
  out["content-security-policy"] = "sandbox";
  out["x-content-type-options"] = "nosniff";
  if (ctx.replicaId) out["x-gpuforge-replica"] = ctx.replicaId;
  out["x-request-id"] = ctx.requestId;
  // a server-sent event stream must reach the client as it is written, not when a proxy's buffer fills
  if (String(upstream["content-type"] ?? "").startsWith("text/event-stream")) out["x-accel-buffering"] = "no";
  return out;
}

/** Methods a retry on another replica cannot duplicate the effect of (RFC 9110 §9.2.2). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);
