import "server-only";
import { randomUUID } from "node:crypto";
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { env } from "@/lib/env";
import { isUuid } from "@/lib/ids";
import { badGateway, gatewayTimeout, HTTP_STATUS, notFound, rateLimited, unavailable, type AppError } from "@/lib/errors";
import { logger } from "@/lib/logger";
import { pickReplica } from "./balancer";
import { authenticateGatewayCaller, type GatewayCaller } from "./gateway-keys";
import { Prober } from "./prober";
import { clientResponseHeaders, IDEMPOTENT_METHODS, upstreamRequestHeaders } from "./proxy-headers";
import { Recorder } from "./recorder";
import { RoutingTable, type EndpointRoute, type ReplicaTarget } from "./routing-table";

// The inference gateway: `ANY /v1/endpoints/{id}/{path}` with a key of the endpoint's tenant (or
// one of the endpoint's own keys) goes to a replica in rotation, the one with the fewest requests
// outstanding; the answer streams back as the replica writes it (server-sent events included).
// A request that fails before any byte reached the client — the replica refused the connection,
// reset it before answering, or (idempotent methods) timed out or answered 502/503/504 — is tried
// once more on another replica. Each process keeps its own routing table, probes and counters and
// writes its per-minute figures to the database, so any number of them can run side by side: in
// the app (app/v1/endpoints/…) and on their own (`npm run gateway`, scripts/gateway-server.ts).

export interface Admission {
  route: EndpointRoute;
  caller: GatewayCaller;
  startedAt: number;
  requestId: string;
}

export interface ForwardInput {
  method: string;
  /** the path after /v1/endpoints/{id}, with its query: what the replica is asked for */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  clientAddress: string;
  proto: string;
}

/** The replica's answer, streaming: the edge writes status and headers, then pipes the body. */
export interface Upstream {
  status: number;
  headers: OutgoingHttpHeaders;
  body: IncomingMessage;
  replicaId: string;
  /** the client went away: stop the replica's work too */
  abort(): void;
}

/** How a gateway process behaves: GATEWAY_* from the environment unless given (tests, the benchmark). */
export interface GatewayOptions {
  refreshMs: number;
  probeIntervalMs: number;
  probeTimeoutMs: number;
  flushMs: number;
  timeoutS: number;
  idleTimeoutS: number;
  maxConcurrencyPerEndpoint: number;
  maxBodyBytes: number;
}

function gatewayOptionsFromEnv(): GatewayOptions {
  const e = env();
  return {
    refreshMs: e.GATEWAY_REFRESH_MS,
    probeIntervalMs: e.GATEWAY_PROBE_INTERVAL_MS,
    probeTimeoutMs: e.GATEWAY_PROBE_TIMEOUT_MS,
    flushMs: e.GATEWAY_FLUSH_MS,
    timeoutS: e.GATEWAY_TIMEOUT_S,
    idleTimeoutS: e.GATEWAY_IDLE_TIMEOUT_S,
    maxConcurrencyPerEndpoint: e.GATEWAY_MAX_CONCURRENCY_PER_ENDPOINT,
    maxBodyBytes: e.GATEWAY_MAX_BODY_BYTES,
  };
}

type Sent = { ok: true; res: IncomingMessage; abort: () => void } | { ok: false; error: NodeJS.ErrnoException; nothingSent: boolean };

export class Gateway {
  readonly table = new RoutingTable();
  readonly recorder = new Recorder();
  readonly prober: Prober;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 128, scheduling: "lifo" });
  private outstanding = new Map<string, number>();
  private inFlight = new Map<string, number>();
  private turn = 0;
  private timers: NodeJS.Timeout[] = [];
  private started = false;
  private stopped = false;

  readonly opts: GatewayOptions;

  constructor(opts: Partial<GatewayOptions> = {}) {
    this.opts = { ...gatewayOptionsFromEnv(), ...opts };
    this.prober = new Prober({ agent: this.agent, timeoutMs: this.opts.probeTimeoutMs });
  }

  /** Starts the refresh, probe and flush loops (once); the first routing table is read before it resolves. */
  async start(): Promise<this> {
    if (this.started) return this;
    this.started = true;
    await this.syncTargets().catch((err: unknown) => logger.warn("gateway: first routing table read failed", { error: String(err) }));
    this.every(this.opts.refreshMs, () => this.syncTargets());
    this.every(this.opts.probeIntervalMs, () => this.probeNow());
    this.every(this.opts.flushMs, () => this.recorder.flush().then(() => {}));
    return this;
  }

  /** One probe round over every replica this process routes to (the loop's step; tests call it too). */
  probeNow(): Promise<void> {
    return this.prober.probe(this.table.targets());
  }

  async close(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await this.recorder.flush();
    this.agent.destroy();
  }

  /** Requests this process has sent to a replica and not seen finish. */
  outstandingOf(replicaId: string): number {
    return this.outstanding.get(replicaId) ?? 0;
  }

  /** Who calls which endpoint: 401 without a valid key, 403 for keys that call no endpoint, 404 for an endpoint that is not the caller's. */
  async admit(endpointId: string, authorization: string | undefined): Promise<Admission> {
    const startedAt = performance.now();
    if (!isUuid(endpointId)) throw notFound("Endpoint");
    const caller = await authenticateGatewayCaller(authorization);
    const route = await this.table.lookup(endpointId.toLowerCase());
    // another tenant's endpoint, or another endpoint than an endpoint key's, does not exist for this caller
    if (!route || route.tenantId !== caller.tenantId || (caller.endpointId !== null && caller.endpointId !== route.id))
      throw notFound("Endpoint");
    return { route, caller, startedAt, requestId: randomUUID() };
  }

  /** The tenant's own call from inside the platform (a pipeline's inference step): no key, the same routing. */
  async admitTenant(endpointId: string, tenantId: string): Promise<Admission> {
    const startedAt = performance.now();
    const route = await this.table.lookup(endpointId);
    if (!route || route.tenantId !== tenantId) throw notFound("Endpoint");
    return { route, caller: { tenantId, endpointId: null, keyId: "pipeline" }, startedAt, requestId: randomUUID() };
  }

  /** Counts a request the gateway answered itself (no replica, too large, refused): an error for the SLA when it is the platform's. */
  recordRefusal(adm: Admission, e: AppError): void {
    const status = HTTP_STATUS[e.code];
    this.recorder.record(adm.route.id, Date.now(), performance.now() - adm.startedAt, status >= 500);
    if (status >= 500) logger.info("gateway: request not served", { endpoint: adm.route.id, code: e.code });
  }

  /** Sends the request to a replica (and once more to another when that cannot hurt); throws an AppError when none answers. */
  async forward(adm: Admission, input: ForwardInput): Promise<Upstream> {
    const { route } = adm;
    if (route.stopped) throw unavailable("The endpoint is stopped");
    const inFlight = this.inFlight.get(route.id) ?? 0;
    if (inFlight >= this.opts.maxConcurrencyPerEndpoint)
      throw rateLimited(`The endpoint has ${inFlight} requests in flight through this gateway; retry shortly`);
    this.inFlight.set(route.id, inFlight + 1);
    let released = false;
    const releaseEndpoint = () => {
      if (released) return;
      released = true;
      this.inFlight.set(route.id, (this.inFlight.get(route.id) ?? 1) - 1);
    };
    const tried = new Set<string>();
    let lastError: AppError = unavailable("No replica of the endpoint is ready to take requests");
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const candidates = route.replicas
          .filter((r) => this.prober.inRotation(r.id) && !tried.has(r.id))
          .map((r) => ({ ...r, outstanding: this.outstandingOf(r.id) }));
        const target = pickReplica(candidates, tried, this.turn++);
        if (!target) break;
        tried.add(target.id);
        this.outstanding.set(target.id, this.outstandingOf(target.id) + 1);
        const sent = await this.send(target, adm, input);
        const retryable =
          (sent.ok ? [502, 503, 504].includes(sent.res.statusCode ?? 0) : true) &&
          (sent.ok || !sent.nothingSent ? IDEMPOTENT_METHODS.has(input.method) : true);
        if (sent.ok && !(retryable && attempt === 0 && this.hasAnother(route, tried)))
          return this.stream(adm, target, sent, releaseEndpoint);
        // not answered by this one: it is done, and perhaps out of rotation
        this.outstanding.set(target.id, this.outstandingOf(target.id) - 1);
        if (sent.ok) {
          sent.res.resume();
          sent.abort();
          lastError = badGateway(`The replica answered ${sent.res.statusCode}`);
        } else {
          const timedOut = sent.error.code === "GATEWAY_TIMEOUT" || sent.error.code === "GATEWAY_IDLE";
          if (!timedOut) this.prober.markFailed(target.id, sent.error.message);
          lastError = timedOut
            ? gatewayTimeout(`The replica did not answer within ${this.opts.timeoutS} s`)
            : badGateway(`The replica could not be reached: ${sent.error.code ?? sent.error.message}`);
        }
        if (!retryable) break;
      }
    } catch (err) {
      releaseEndpoint();
      throw err;
    }
    releaseEndpoint();
    throw lastError;
  }

  private hasAnother(route: EndpointRoute, tried: ReadonlySet<string>): boolean {
    return route.replicas.some((r) => !tried.has(r.id) && this.prober.inRotation(r.id));
  }

  private send(target: ReplicaTarget, adm: Admission, input: ForwardInput): Promise<Sent> {
    const { timeoutS, idleTimeoutS } = this.opts;
    return new Promise((resolve) => {
      let settled = false;
      let connected = false;
      const req = http.request({
        host: target.host,
        port: target.port,
        method: input.method,
        path: input.path,
        agent: this.agent,
        setHost: false,
        headers: upstreamRequestHeaders(input.headers, {
          host: `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`,
          bodyLength: input.body.length,
          clientAddress: input.clientAddress,
          proto: input.proto,
          requestId: adm.requestId,
          endpointId: adm.route.id,
        }),
      });
      const fail = (code: string, message: string) => req.destroy(Object.assign(new Error(message), { code }));
      const headersTimer = setTimeout(() => fail("GATEWAY_TIMEOUT", `no answer within ${timeoutS} s`), timeoutS * 1000);
      // a stream that goes quiet for longer than the idle timeout is cut
      req.setTimeout(idleTimeoutS * 1000, () => fail("GATEWAY_IDLE", `quiet for ${idleTimeoutS} s`));
      req.on("socket", (s) => {
        if (s.connecting) s.once("connect", () => (connected = true));
        else connected = true;
      });
      req.on("response", (res) => {
        clearTimeout(headersTimer);
        settled = true;
        resolve({ ok: true, res, abort: () => req.destroy() });
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(headersTimer);
        if (settled) return;
        settled = true;
        // nothing reached the replica: it never connected, or a kept-alive connection it had closed was reset on reuse
        resolve({ ok: false, error, nothingSent: !connected || (req.reusedSocket && error.code === "ECONNRESET") });
      });
      req.end(input.body);
    });
  }

  private stream(adm: Admission, target: ReplicaTarget, sent: Extract<Sent, { ok: true }>, releaseEndpoint: () => void): Upstream {
    const { res } = sent;
    let done = false;
    const finish = (broken: boolean) => {
      if (done) return;
      done = true;
      this.outstanding.set(target.id, this.outstandingOf(target.id) - 1);
      releaseEndpoint();
      this.recorder.record(adm.route.id, Date.now(), performance.now() - adm.startedAt, broken || (res.statusCode ?? 0) >= 500);
    };
    res.once("end", () => finish(false));
    res.once("error", () => finish(true));
    res.once("close", () => finish(!res.complete));
    return {
      status: res.statusCode ?? 502,
      headers: clientResponseHeaders(res.headers, { replicaId: target.id, requestId: adm.requestId }),
      body: res,
      replicaId: target.id,
      abort: () => {
        if (!res.complete) sent.abort();
      },
    };
  }

  /** Reads the routing table again and probes replicas it has not seen yet at once (new ones join rotation within a refresh). */
  private async syncTargets(): Promise<void> {
    await this.table.refresh();
    const fresh = this.table.targets().filter((t) => !this.prober.known(t.id));
    if (fresh.length) await this.probeNow();
  }

  private every(ms: number, fn: () => Promise<void>) {
    const tick = async () => {
      if (this.stopped) return;
      await fn().catch((err: unknown) => logger.warn("gateway: background step failed", { error: String(err) }));
      if (!this.stopped) this.timers.push(setTimeout(tick, ms).unref());
    };
    this.timers.push(setTimeout(tick, ms).unref());
  }
}

const globalForGateway = globalThis as unknown as { gateway?: Promise<Gateway> };

/** This process's gateway, started on first use. */
export function gateway(): Promise<Gateway> {
  globalForGateway.gateway ??= new Gateway().start();
  return globalForGateway.gateway;
}

/** Stops this process's gateway (tests, shutdown); the next use starts a fresh one. */
export async function stopGateway(): Promise<void> {
  const g = globalForGateway.gateway;
  globalForGateway.gateway = undefined;
  await (await g)?.close();
}
