import http from "node:http";
import https from "node:https";
import type { FetchLike } from "./client";

// The simulator's HTTP transport: one process plays thousands of agents, each of which would have
// its own machine's sockets. With the global fetch every request in flight holds a connection of its
// own, so a stalled control plane (an app process killed, a database restarting) piles up one socket
// per waiting heartbeat and metrics report, and at 10,000 nodes that ran the soak out of file
// descriptors (EMFILE) in the middle of a run. Here all simulated nodes share kept-alive
// connections, at most `maxSocketsPerOrigin` to each address; requests beyond that wait their turn,
// and the caller's timeout (its AbortSignal) counts that wait, as a busy network would.

export function pooledFetch(opts: { maxSocketsPerOrigin: number }): FetchLike & { close(): void } {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: opts.maxSocketsPerOrigin, maxFreeSockets: opts.maxSocketsPerOrigin }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: opts.maxSocketsPerOrigin, maxFreeSockets: opts.maxSocketsPerOrigin }),
  };
  const doFetch = (url: string, init: Parameters<FetchLike>[1]) =>
    new Promise<Awaited<ReturnType<FetchLike>>>((resolve, reject) => {
      const target = new URL(url);
      const protocol = target.protocol === "https:" ? "https:" : "http:";
      const body = init.body === undefined ? undefined : Buffer.from(init.body);
      const req = (protocol === "https:" ? https : http).request(
        target,
        {
          method: init.method,
          agent: agents[protocol],
          headers: { ...init.headers, ...(body ? { "content-length": String(body.length) } : {}) },
          signal: init.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = res.statusCode ?? 0;
            resolve({ ok: status >= 200 && status < 300, status, text: async () => text });
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return Object.assign(doFetch, {
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  });
}
