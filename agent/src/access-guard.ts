// The agent's access guard: the only way into a replica's serving port or a pod's HTTP ports.
// Their containers publish nothing on the node; for each such port the agent listens on the host
// port it reports, and forwards a request to the container (its address on the workload network)
// only when the request carries the placement's access secret (x-gpuforge-access), which the
// control plane gives the agent in the heartbeat and the inference gateway computes for itself.
// Anyone else who can reach the node — another tenant's container through the bridge or the node's
// address, a neighbour on the network, the internet when nodes have public addresses — is answered
// 403 before a byte reaches the container. The secret is compared in constant time and removed
// before the request goes on, so the container never learns it.
//
// Why a secret and not host firewall rules (SECURITY.md, "Workload ports"): rules would have to
// name every gateway's address (they scale out behind load balancers and NAT, and change), follow
// docker's own chains (published ports bypass INPUT through DNAT; with docker's iptables off they
// do not), be written for IPv4 and IPv6, need the agent to hold NET_ADMIN, and survive firewalld or
// ufw reloading over them. The secret needs none of that, checks the caller itself rather than
// where a packet seems to come from, and works the same on every node, whatever its network.
import { timingSafeEqual } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { WORKLOAD_ACCESS_HEADER } from "../../lib/fleet/workload-access";

export interface GuardTarget {
  host: string;
  port: number;
}

/** Headers that describe one connection (RFC 9110 §7.6.1): the guard's two hops are two connections. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"];

function refuse(res: ServerResponse, status: number, code: string, message: string) {
  if (res.headersSent) return void res.destroy();
  const body = JSON.stringify({ error: { code, message, details: [] } });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}

/** One guarded host port: listens on the node, forwards requests that carry the secret to the container's port. */
export class AccessGuard {
  private readonly server: http.Server;
  private readonly secret: Buffer;
  private target: GuardTarget | null = null;
  private readonly upstream = new http.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(
    secret: string,
    private readonly opts: { label: string; timeoutMs?: number } = { label: "workload" },
  ) {
    this.secret = Buffer.from(secret);
    this.server = http.createServer({ connectionsCheckingInterval: 5_000 }, (req, res) => this.handle(req, res));
    // requests with a body larger than the guard ever holds stream through; slow clients are cut
    this.server.headersTimeout = 30_000;
    this.server.requestTimeout = 0;
    this.server.keepAliveTimeout = 65_000;
  }

  /** Starts listening on `host:port` (every address of the node when host is absent); rejects when the port is taken. */
  listen(port: number, host?: string): Promise<void> {
    if (host !== undefined && !isIP(host)) return Promise.reject(new Error(`not an address to listen on: ${host}`));
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.server.once("error", onError);
      this.server.listen({ port, ...(host ? { host } : {}), exclusive: true }, () => {
        this.server.off("error", onError);
        this.server.on("error", () => {});
        resolve();
      });
    });
  }

  /** Where the container listens now (its address changes when it is started again); null while it is not up. */
  setTarget(target: GuardTarget | null): void {
    this.target = target;
  }

  get port(): number {
    const a = this.server.address();
    return typeof a === "object" && a ? a.port : 0;
  }

  close(): void {
    this.server.close();
    this.server.closeAllConnections();
    this.upstream.destroy();
  }

  private admitted(req: IncomingMessage): boolean {
    const given = req.headers[WORKLOAD_ACCESS_HEADER];
    if (typeof given !== "string") return false;
    const b = Buffer.from(given);
    return b.length === this.secret.length && timingSafeEqual(b, this.secret);
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    // refused before a byte of the body is read or anything reaches the container
    if (!this.admitted(req)) {
      req.resume();
      return refuse(res, 403, "forbidden", `This port of ${this.opts.label} answers the GPUForge inference gateway only`);
    }
    const target = this.target;
    if (!target) return refuse(res, 503, "unavailable", `${this.opts.label} is not running yet`);
    const headers: http.OutgoingHttpHeaders = {};
    const named = new Set(
      String(req.headers.connection ?? "")
        .split(",")
        .map((s) => s.trim().toLowerCase()),
    );
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || k === WORKLOAD_ACCESS_HEADER || HOP_BY_HOP.includes(k) || named.has(k)) continue;
      headers[k] = v;
    }
    const up = http.request({ host: target.host, port: target.port, method: req.method, path: req.url, headers, agent: this.upstream });
    up.setTimeout(this.opts.timeoutMs ?? 300_000, () => up.destroy(new Error("the workload went quiet")));
    up.on("response", (r) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) out[k] = v;
      res.writeHead(r.statusCode ?? 502, out);
      r.pipe(res);
      r.on("error", () => res.destroy());
    });
    up.on("error", (e) =>
      refuse(res, 502, "bad_gateway", `${this.opts.label} did not answer: ${(e as NodeJS.ErrnoException).code ?? e.message}`),
    );
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }
}
