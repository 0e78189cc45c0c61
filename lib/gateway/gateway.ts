import "server-only";
import { randomUUID } from "node:crypto";
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { env } from "@/lib/env";
import { isUuid } from "@/lib/ids";
import { badGateway, gatewayTimeout, HTTP_STATUS, isAppError, notFound, rateLimited, unavailable, type AppError } from "@/lib/errors";
import { consumeRateLimit } from "@/lib/http/rate-limit";
import { logger } from "@/lib/logger";
import { pickReplica } from "./balancer";
import { authenticateGatewayCaller, type GatewayCaller } from "./gateway-keys";
import { Prober } from "./prober";
import { clientResponseHeaders, IDEMPOTENT_METHODS, upstreamRequestHeaders } from "./proxy-headers";
import { Recorder } from "./recorder";
import { StreamedBody, type RequestBody } from "./request-body";
import { RoutingTable, type EndpointRoute, type PodRoute, type ReplicaTarget } from "./routing-table";

// The inference gateway: `ANY /v1/endpoints/{id}/{path}` with a key of the endpoint's tenant (or
// one of the endpoint's own keys) goes to a replica in rotation, the one with the fewest requests
// outstanding; the answer streams back as the replica writes it (server-sent events included).
// A request that fails before any byte reached the client — the replica refused the connection,
// reset it before answering, or (idempotent methods) timed out or answered 502/503/504 — is tried
// once more on another replica, when its body can be sent again (lib/gateway/request-body.ts).
// `ANY /v1/pods/{id}/ports/{port}/{path}` reaches a running pod's HTTP port the same way, with a key
// of the pod's tenant. Each process keeps its own routing table, probes and counters and writes its
// per-minute figures to the database, so any number of them can run side by side: in the app
// (app/v1/…) and on their own (`npm run gateway`, scripts/gateway-server.ts).
//
// A request is admitted before a byte of its body is read: its key (rate and requests in flight
// per key, GATEWAY_RATE_PER_KEY_PER_MINUTE and GATEWAY_MAX_CONCURRENCY_PER_KEY) and its endpoint
// (GATEWAY_MAX_CONCURRENCY_PER_ENDPOINT) must have room, and the slots it takes are held until its
// answer has streamed back. One key cannot fill an endpoint's share, nor a gateway's memory.
// Every request to a node carries the placement's access secret, which the node's access guard
// asks for (lib/fleet/workload-access.ts); replicas and pods publish nothing else.

interface AdmissionBase {
  caller: GatewayCaller;
  startedAt: number;
  requestId: string;
  /** gives back the slots the request holds (its key's, its endpoint's); idempotent, and done by the answer's end */
  release(): void;
}

export type Admission =
  | (AdmissionBase & { kind: "endpoint"; route: EndpointRoute })
  | (AdmissionBase & { kind: "pod"; pod: PodRoute; port: number; hostPort: number });

export interface ForwardInput {
  method: string;
  /** the path after /v1/endpoints/{id}, with its query: what the replica is asked for */
  path: string;
  headers: IncomingHttpHeaders;
  /** held whole when short, else streamed as the client sends it (takeRequestBody) */
  body: RequestBody;
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
  /** requests one key may have in flight through this process */
  maxConcurrencyPerKey: number;
  /** requests one key may start a minute through this process (0: no rate limit) */
  ratePerKeyPerMinute: number;
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
    maxConcurrencyPerKey: e.GATEWAY_MAX_CONCURRENCY_PER_KEY,
    ratePerKeyPerMinute: e.GATEWAY_RATE_PER_KEY_PER_MINUTE,
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
  private keyInFlight = new Map<string, number>();
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
    return this.admitted(caller, startedAt, { kind: "endpoint", route });
  }

  /**
   * Who calls a pod's port: a key of the pod's tenant (an endpoint key calls its endpoint only).
   * Another tenant's pod, one not running, and a port the pod does not serve over HTTP are 404.
   */
  async admitPod(podId: string, port: number, authorization: string | undefined): Promise<Admission> {
    const startedAt = performance.now();
    if (!isUuid(podId)) throw notFound("Pod");
    const caller = await authenticateGatewayCaller(authorization);
    if (caller.endpointId !== null) throw notFound("Pod");
    const pod = await this.table.lookupPod(podId.toLowerCase());
    if (!pod || pod.tenantId !== caller.tenantId) throw notFound("Pod");
    const hostPort = pod.ports.get(port);
    if (hostPort === undefined) throw notFound("Pod port");
    return this.admitted(caller, startedAt, { kind: "pod", pod, port, hostPort });
  }

  /** The tenant's own call from inside the platform (a pipeline's inference step): no key, the same routing and limits. */
  async admitTenant(endpointId: string, tenantId: string): Promise<Admission> {
    const startedAt = performance.now();
    const route = await this.table.lookup(endpointId);
    if (!route || route.tenantId !== tenantId) throw notFound("Endpoint");
    return this.admitted({ tenantId, endpointId: null, keyId: `pipeline:${tenantId}` }, startedAt, { kind: "endpoint", route });
  }

  /** Takes the request's slots (its key's rate and concurrency, its endpoint's concurrency), or refuses it with 429/503. */
  private async admitted(
    caller: GatewayCaller,
    startedAt: number,
    target: { kind: "endpoint"; route: EndpointRoute } | { kind: "pod"; pod: PodRoute; port: number; hostPort: number },
  ): Promise<Admission> {
    if (target.kind === "endpoint" && target.route.stopped) throw unavailable("The endpoint is stopped");
    const { maxConcurrencyPerKey, maxConcurrencyPerEndpoint, ratePerKeyPerMinute } = this.opts;
    if (ratePerKeyPerMinute > 0)
      await consumeRateLimit(`gateway-key:${caller.keyId}`, ratePerKeyPerMinute).catch((e: unknown) => {
        throw isAppError(e) && e.code === "rate_limited"
          ? rateLimited(`This key made more than ${ratePerKeyPerMinute} requests this minute through this gateway; retry shortly`)
          : e;
      });
    const byKey = this.keyInFlight.get(caller.keyId) ?? 0;
    if (byKey >= maxConcurrencyPerKey)
      throw rateLimited(`This key has ${byKey} requests in flight through this gateway (at most ${maxConcurrencyPerKey}); retry shortly`);
    const endpointId = target.kind === "endpoint" ? target.route.id : null;
    if (endpointId !== null) {
      const byEndpoint = this.inFlight.get(endpointId) ?? 0;
      if (byEndpoint >= maxConcurrencyPerEndpoint)
        throw rateLimited(`The endpoint has ${byEndpoint} requests in flight through this gateway; retry shortly`);
      this.inFlight.set(endpointId, byEndpoint + 1);
    }
    this.keyInFlight.set(caller.keyId, byKey + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (endpointId !== null) decrement(this.inFlight, endpointId);
      decrement(this.keyInFlight, caller.keyId);
    };
    return { ...target, caller, startedAt, requestId: randomUUID(), release };
  }

  /** Requests in flight through this process for a key (its slots), and for an endpoint. */
  inFlightOf(what: { keyId?: string; endpointId?: string }): number {
    return what.keyId !== undefined ? (this.keyInFlight.get(what.keyId) ?? 0) : (this.inFlight.get(what.endpointId ?? "") ?? 0);
  }

  /** Counts a request the gateway answered itself (no replica, too large, refused): an error for the SLA when it is the platform's. */
  recordRefusal(adm: Admission, e: AppError): void {
    adm.release();
    if (adm.kind !== "endpoint") return;
    const status = HTTP_STATUS[e.code];
    this.recorder.record(adm.route.id, Date.now(), performance.now() - adm.startedAt, status >= 500);
    if (status >= 500) logger.info("gateway: request not served", { endpoint: adm.route.id, code: e.code });
  }

  /** Sends the request to a replica (and once more to another when that cannot hurt) or to the pod; throws an AppError when none answers. */
  async forward(adm: Admission, input: ForwardInput): Promise<Upstream> {
    try {
      return adm.kind === "pod" ? await this.forwardToPod(adm, input) : await this.forwardToEndpoint(adm, input);
    } catch (err) {
      adm.release();
      if (input.body instanceof StreamedBody) input.body.cancel();
      throw err;
    }
  }

  private async forwardToPod(adm: Extract<Admission, { kind: "pod" }>, input: ForwardInput): Promise<Upstream> {
    const target = { id: adm.pod.id, host: adm.pod.host, port: adm.hostPort, secret: adm.pod.secret };
    const sent = await this.send(target, adm, input);
    if (sent.ok) return this.stream(adm, target, sent, false);
    if (sent.error.code === "GATEWAY_TOO_LARGE") throw sent.error.cause as AppError;
    const timedOut = sent.error.code === "GATEWAY_TIMEOUT" || sent.error.code === "GATEWAY_IDLE";
    throw timedOut
      ? gatewayTimeout(`The pod did not answer within ${this.opts.timeoutS} s`)
      : badGateway(`The pod's port could not be reached: ${sent.error.code ?? sent.error.message}`);
  }

  private async forwardToEndpoint(adm: Extract<Admission, { kind: "endpoint" }>, input: ForwardInput): Promise<Upstream> {
    const { route } = adm;
    const tried = new Set<string>();
    let lastError: AppError = unavailable("No replica of the endpoint is ready to take requests");
    for (let attempt = 0; attempt < 2; attempt++) {
      const candidates = route.replicas
        .filter((r) => this.prober.inRotation(r.id) && !tried.has(r.id))
        .map((r) => ({ ...r, outstanding: this.outstandingOf(r.id) }));
      const target = pickReplica(candidates, tried, this.turn++);
      if (!target) break;
      tried.add(target.id);
      this.outstanding.set(target.id, this.outstandingOf(target.id) + 1);
      const sent = await this.send(target, adm, input);
      // a streamed body can go out once: past its held prefix, nothing is left to send another replica
      const resendable = !(input.body instanceof StreamedBody) || !input.body.consumed;
      const retryable =
        resendable &&
        (sent.ok ? [502, 503, 504].includes(sent.res.statusCode ?? 0) : sent.error.code !== "GATEWAY_TOO_LARGE") &&
        (sent.ok || !sent.nothingSent ? IDEMPOTENT_METHODS.has(input.method) : true);
      if (sent.ok && !(retryable && attempt === 0 && this.hasAnother(route, tried))) return this.stream(adm, target, sent, true);
      // not answered by this one: it is done, and perhaps out of rotation
      this.outstanding.set(target.id, this.outstandingOf(target.id) - 1);
      if (sent.ok) {
        sent.res.resume();
        sent.abort();
        lastError = badGateway(`The replica answered ${sent.res.statusCode}`);
      } else if (sent.error.code === "GATEWAY_TOO_LARGE") {
        throw sent.error.cause as AppError;
      } else {
        const timedOut = sent.error.code === "GATEWAY_TIMEOUT" || sent.error.code === "GATEWAY_IDLE";
        if (!timedOut) this.prober.markFailed(target.id, sent.error.message);
        lastError = timedOut
          ? gatewayTimeout(`The replica did not answer within ${this.opts.timeoutS} s`)
          : badGateway(`The replica could not be reached: ${sent.error.code ?? sent.error.message}`);
      }
      if (!retryable) break;
    }
    throw lastError;
  }

  private hasAnother(route: EndpointRoute, tried: ReadonlySet<string>): boolean {
    return route.replicas.some((r) => !tried.has(r.id) && this.prober.inRotation(r.id));
  }

  private send(target: ReplicaTarget, adm: Admission, input: ForwardInput): Promise<Sent> {
    const { timeoutS, idleTimeoutS } = this.opts;
    const { body } = input;
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
          // a streamed body keeps the client's exact length when it declared one, else goes chunked
          bodyLength: Buffer.isBuffer(body) ? body.length : body.declaredLength,
          clientAddress: input.clientAddress,
          proto: input.proto,
          requestId: adm.requestId,
          ...(adm.kind === "endpoint" ? { endpointId: adm.route.id } : { podId: adm.pod.id }),
          accessSecret: target.secret,
        }),
      });
      const fail = (code: string, message: string, cause?: unknown) => req.destroy(Object.assign(new Error(message), { code, cause }));
      const headersTimer = setTimeout(() => fail("GATEWAY_TIMEOUT", `no answer within ${timeoutS} s`), timeoutS * 1000);
      // a stream that goes quiet for longer than the idle timeout is cut
      req.setTimeout(idleTimeoutS * 1000, () => fail("GATEWAY_IDLE", `quiet for ${idleTimeoutS} s`));
      // a streamed body is taken from the client only once the replica's connection is up: a
      // replica that refuses it leaves the body whole for another
      const pump = async (s: StreamedBody) => {
        try {
          for await (const chunk of s.chunks()) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
          req.end();
        } catch (e) {
          fail(isAppError(e) && e.code === "payload_too_large" ? "GATEWAY_TOO_LARGE" : "GATEWAY_CLIENT", String(e), e);
        }
      };
      req.on("socket", (s) => {
        const up = () => {
          connected = true;
          if (body instanceof StreamedBody) void pump(body);
        };
        if (s.connecting) s.once("connect", up);
        else up();
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
      if (Buffer.isBuffer(body)) req.end(body);
    });
  }

  private stream(adm: Admission, target: ReplicaTarget, sent: Extract<Sent, { ok: true }>, replica: boolean): Upstream {
    const { res } = sent;
    let done = false;
    const finish = (broken: boolean) => {
      if (done) return;
      done = true;
      if (replica) this.outstanding.set(target.id, this.outstandingOf(target.id) - 1);
      adm.release();
      if (adm.kind === "endpoint")
        this.recorder.record(adm.route.id, Date.now(), performance.now() - adm.startedAt, broken || (res.statusCode ?? 0) >= 500);
    };
    res.once("end", () => finish(false));
    res.once("error", () => finish(true));
    res.once("close", () => finish(!res.complete));
    return {
      status: res.statusCode ?? 502,
      headers: clientResponseHeaders(res.headers, { ...(replica ? { replicaId: target.id } : {}), requestId: adm.requestId }),
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

function decrement(m: Map<string, number>, key: string): void {
  const n = (m.get(key) ?? 1) - 1;
  if (n > 0) m.set(key, n);
  else m.delete(key);
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
