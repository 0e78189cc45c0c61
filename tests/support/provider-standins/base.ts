import http from "node:http";
import type { AddressInfo } from "node:net";

// What the three provider stand-ins share: an HTTP server on a free loopback port, the bearer key
// it accepts, a log of what it was asked, and failures queued per operation so a test can make the
// next launch (say) answer a capacity error, a 5xx, a 429 with Retry-After, hang past the client's
// timeout or drop the connection. Each stand-in (runpod.ts, lambda.ts, vast.ts) speaks its
// provider's documented wire format on top; nothing here knows GPUForge's client.

export type Fault =
  | { kind: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: "hang" }
  | { kind: "reset" }
  /** the provider's own failure body (capacity, unknown ask): the stand-in writes it in its format */
  | { kind: "capacity" };

export interface Booted {
  /** the provider's id of the instance */
  id: string;
  name: string;
  gpuCount: number;
  providerGpuType: string;
  /** the environment the provider hands the instance (as its start mechanism would) */
  env: Record<string, string>;
  startScript: string;
}

export interface StandInOptions {
  key?: string;
  /** an instance "boots": the test starts a simulated node agent with its env */
  onBoot?: (instance: Booted) => void | Promise<void>;
  /** ms from launch until the instance reports running (0: at once) */
  bootMs?: number;
}

interface Logged {
  method: string;
  path: string;
  operation: string;
  authorization: string | undefined;
  body: unknown;
}

class FaultQueue {
  private queued = new Map<string, Fault[]>();
  /** the next `times` calls of `operation` fail this way */
  add(operation: string, fault: Fault, times = 1) {
    const q = this.queued.get(operation) ?? [];
    for (let i = 0; i < times; i++) q.push(fault);
    this.queued.set(operation, q);
  }
  take(operation: string): Fault | undefined {
    return this.queued.get(operation)?.shift() ?? this.queued.get("*")?.shift();
  }
  clear() {
    this.queued.clear();
  }
}

export interface Route {
  operation: string;
  handle: (body: unknown, url: URL) => { status: number; body: unknown; headers?: Record<string, string> };
}

/**
 * Serves `resolve(req)` → route; applies a queued fault first; refuses a wrong bearer with `unauthorized`.
 * `capacityBody(op)` is the provider's own answer to a capacity fault.
 */
export async function serve(opts: {
  key: string;
  resolve: (method: string, url: URL, body: unknown) => Route | null;
  unauthorized: () => { status: number; body: unknown };
  capacity: (operation: string) => { status: number; body: unknown };
  notFound: () => { status: number; body: unknown };
}) {
  const faults = new FaultQueue();
  const log: Logged[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://standin");
      let body: unknown = undefined;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const route = opts.resolve(req.method ?? "GET", url, body);
      const operation = route?.operation ?? "unknown";
      log.push({ method: req.method ?? "GET", path: url.pathname + url.search, operation, authorization: req.headers.authorization, body });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(payload === undefined ? "" : JSON.stringify(payload));
      };
      if (req.headers.authorization !== `Bearer ${opts.key}`) {
        const u = opts.unauthorized();
        return send(u.status, u.body);
      }
      const fault = faults.take(operation);
      if (fault?.kind === "hang") return; // never answers: the client's deadline must end it
      if (fault?.kind === "reset") return req.socket.destroy();
      if (fault?.kind === "status") return send(fault.status, fault.body, fault.headers);
      if (fault?.kind === "capacity") {
        const c = opts.capacity(operation);
        return send(c.status, c.body);
      }
      if (!route) {
        const n = opts.notFound();
        return send(n.status, n.body);
      }
      const out = route.handle(body, url);
      send(out.status, out.body, out.headers);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    faults,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export const later = (ms: number, fn: () => void) => {
  const t = setTimeout(fn, ms);
  t.unref();
};
