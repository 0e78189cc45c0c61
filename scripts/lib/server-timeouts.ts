import type http from "node:http";

// Limits every GPUForge HTTP server sets on its sockets (Node's defaults wait a minute for headers
// and five for a body, which lets a slow client hold a connection for free).
export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
}

export const SERVER_TIMEOUTS: ServerTimeouts = {
  /** the whole request head must arrive within this */
  headersTimeoutMs: 10_000,
  /** the whole request, body included */
  requestTimeoutMs: 30_000,
  /** an idle kept-alive connection; above a load balancer's usual 60 s so the balancer closes first */
  keepAliveTimeoutMs: 65_000,
  /** a socket with no traffic at all */
  idleTimeoutMs: 120_000,
};

export function applyServerTimeouts(server: http.Server, t: ServerTimeouts = SERVER_TIMEOUTS): void {
  server.headersTimeout = t.headersTimeoutMs;
  server.requestTimeout = t.requestTimeoutMs;
  server.keepAliveTimeout = t.keepAliveTimeoutMs;
  server.timeout = t.idleTimeoutMs;
  // a slow request is answered 408 by Node itself; idle sockets are simply closed
  server.on("timeout", (socket: { destroy: () => void }) => socket.destroy());
}
