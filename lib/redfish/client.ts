import type { BmcAddressPolicy } from "./address-policy";
import { isRedfishError, RedfishError } from "./errors";
import { isNotReady, redfishMessages, retryAfterMs, type QuirkId } from "./quirks";
import { odataId, type Json } from "./resources";
import { neverSent, send, type Answer } from "./transport";

// A Redfish client written from DMTF's DSP0266: it reads the service root without credentials, logs
// in through the SessionService (X-Auth-Token), falls back to basic auth where the BMC has no
// working sessions, logs in once more on a 401 of a session that worked, and repeats what may be
// repeated (GET/PATCH/DELETE on 5xx; anything on "not ready"; a POST only when it cannot have
// arrived) with exponential backoff and Retry-After. It never builds a resource path: every path it
// requests is one the BMC gave it (a link), except the service root. Each request is handed to
// `record` with its answer and timing; passwords and tokens never are. What changes a BMC (PATCH
// with ETags, actions, 202 tasks) is in requests.ts, on top of `call`.

export interface RedfishTarget {
  /** the BMC's address, scheme://host[:port]; the service root is /redfish/v1/ there */
  url: string;
  username: string;
  password: string;
  verifyTls: boolean;
  caPem?: string | null;
  policy: BmcAddressPolicy;
}

export interface RedfishTiming {
  /** one request's limit */
  timeoutMs: number;
  /** repeats after the first try, for what may be repeated */
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
  /** how long a 202 task may run, and how often its monitor is read when it gives no Retry-After */
  taskTimeoutMs: number;
  taskPollMs: number;
  /** how long a reset may take to show in PowerState, and how often it is read */
  powerTimeoutMs: number;
  powerPollMs: number;
  maxResponseBytes: number;
}

const DEFAULT_TIMING: RedfishTiming = {
  timeoutMs: 20_000,
  retries: 5,
  backoffMs: 500,
  maxBackoffMs: 8_000,
  taskTimeoutMs: 600_000,
  taskPollMs: 1_000,
  powerTimeoutMs: 300_000,
  powerPollMs: 2_000,
  maxResponseBytes: 1024 * 1024,
};

/** One request and what came of it, as the node page shows it. */
export interface Exchange {
  at: string;
  method: string;
  path: string;
  /** null: no answer (the error says why) */
  status: number | null;
  duration_ms: number;
  request?: string;
  response?: string;
  error?: string;
  /** why this request repeats or replaces an earlier one (lib/redfish/quirks.ts) */
  quirk?: QuirkId;
}

export interface Resource {
  path: string;
  json: Json;
  etag?: string;
  /** the methods its Allow header lists, upper case */
  allow: string[];
}

type Auth = { kind: "none" } | { kind: "basic" } | { kind: "session"; token: string; location?: string };

interface CallOptions {
  quirk?: QuirkId;
  headers?: Record<string, string>;
  /** the login itself: no credentials header, no re-login */
  login?: boolean;
}

const EXCERPT = 2048;
const excerpt = (s: string) => (s.length > EXCERPT ? `${s.slice(0, EXCERPT)}… (${s.length} bytes)` : s);
const ok = (status: number) => status >= 200 && status < 300;

/** A request body as the log shows it: every Password member masked. */
function masked(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  return excerpt(JSON.stringify(body, (k, v: unknown) => (/password/i.test(k) && v !== null && v !== undefined ? "********" : v)));
}

export class RedfishClient {
  private auth: Auth = { kind: "none" };
  private readonly origin: URL;
  private readonly timing: RedfishTiming;
  private readonly sleep: (ms: number) => Promise<void>;
  private rootDoc?: Json;

  private readonly signal?: AbortSignal;

  constructor(
    private readonly target: RedfishTarget,
    opts: {
      timing?: Partial<RedfishTiming>;
      record?: (e: Exchange) => void;
      sleep?: (ms: number) => Promise<void>;
      /** once aborted, nothing more is sent: the next request or wait throws the abort's reason */
      signal?: AbortSignal;
    } = {},
  ) {
    const u = new URL(target.url);
    this.origin = new URL(`${u.protocol}//${u.host}`);
    this.timing = { ...DEFAULT_TIMING, ...opts.timing };
    this.record = opts.record ?? (() => {});
    this.signal = opts.signal;
    const signal = opts.signal;
    this.sleep =
      opts.sleep ??
      ((ms) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason as Error);
          const t = setTimeout(() => {
            signal?.removeEventListener("abort", stop);
            resolve();
          }, ms);
          const stop = () => {
            clearTimeout(t);
            reject(signal!.reason as Error);
          };
          signal?.addEventListener("abort", stop, { once: true });
        }));
  }

  private readonly record: (e: Exchange) => void;

  get authMode(): Auth["kind"] {
    return this.auth.kind;
  }

  /** The service root (read without credentials, as DSP0266 allows), then a login. */
  async connect(): Promise<Json> {
    let root = await this.call("GET", "/redfish/v1/");
    if (root.status === 401 || root.status === 403) {
      this.auth = { kind: "basic" };
      root = await this.call("GET", "/redfish/v1/", undefined, { quirk: "root_requires_auth" });
    }
    this.rootDoc = this.objectOf(this.expect(root, "GET", "/redfish/v1/"), "/redfish/v1/");
    await this.login();
    return this.rootDoc;
  }

  get root(): Json {
    if (!this.rootDoc) throw new Error("connect() first");
    return this.rootDoc;
  }

  private async login(): Promise<void> {
    const root = this.root;
    let path = odataId((root.Links as Json | undefined)?.Sessions);
    let quirk: QuirkId | undefined;
    if (!path) {
      quirk = "sessions_link_missing";
      const service = odataId(root.SessionService);
      if (service) {
        const s = await this.call("GET", service, undefined, { quirk });
        path = ok(s.status) ? odataId((s.json as Json | undefined)?.Sessions) : undefined;
      }
      path ??= "/redfish/v1/SessionService/Sessions";
    }
    const answer = await this.call(
      "POST",
      path,
      { UserName: this.target.username, Password: this.target.password },
      { quirk, login: true },
    );
    const token = answer.headers["x-auth-token"];
    if (ok(answer.status) && token) {
      this.auth = { kind: "session", token, ...(answer.headers.location ? { location: answer.headers.location } : {}) };
      return;
    }
    this.auth = { kind: "basic" };
    await this.checkBasic(answer.status === 401 || answer.status === 403 ? "session_login_refused" : "session_login_unavailable");
  }

  /** Basic auth must work for something that needs credentials: the systems collection (or the root's first link). */
  private async checkBasic(quirk: QuirkId): Promise<void> {
    const probe = odataId(this.root.Systems) ?? odataId(this.root.Managers) ?? "/redfish/v1/Systems";
    const a = await this.call("GET", probe, undefined, { quirk });
    if (a.status === 401 || a.status === 403)
      throw new RedfishError("credentials_refused", `the BMC refused the username or password of ${this.target.username}`, {
        status: a.status,
        path: probe,
      });
  }

  /** Ends the session (a BMC keeps only a few open at a time). Never throws. */
  async close(): Promise<void> {
    if (this.auth.kind !== "session" || !this.auth.location) return;
    const location = this.auth.location;
    try {
      await this.call("DELETE", location);
    } catch {
      // the session expires on its own
    }
    this.auth = { kind: "none" };
  }

  // ------------------------------------------------------------ requests

  /** A path the BMC gave us, as a URL on the BMC itself (a link to another host is refused). */
  private resolve(ref: string): URL {
    if (ref.startsWith("/") && !ref.startsWith("//")) return new URL(ref, this.origin);
    let u: URL;
    try {
      u = new URL(ref);
    } catch {
      throw new RedfishError("bad_answer", `not a resource path: ${ref.slice(0, 200)}`);
    }
    if (u.origin !== this.origin.origin) throw new RedfishError("bad_answer", `a link leads away from the BMC, to ${u.origin}`);
    return u;
  }

  private credentials(): Record<string, string> {
    if (this.auth.kind === "session") return { "x-auth-token": this.auth.token };
    if (this.auth.kind === "basic")
      return { authorization: `Basic ${Buffer.from(`${this.target.username}:${this.target.password}`).toString("base64")}` };
    return {};
  }

  private backoff(attempt: number): number {
    return Math.min(this.timing.backoffMs * 2 ** attempt, this.timing.maxBackoffMs);
  }

  /** One logical request: repeated where that is safe, logged each time. Answers any status; callers judge it. */
  async call(method: string, path: string, body?: unknown, o: CallOptions = {}): Promise<Answer> {
    const url = this.resolve(path);
    const idempotent = method !== "POST";
    let quirk = o.quirk;
    let relogged = false;
    for (let attempt = 0; ;) {
      const at = new Date();
      const started = performance.now();
      let answer: Answer | undefined;
      let failure: RedfishError | undefined;
      try {
        answer = await send(
          url,
          method,
          { ...(o.login ? {} : this.credentials()), ...o.headers },
          body === undefined ? undefined : JSON.stringify(body),
          {
            timeoutMs: this.timing.timeoutMs,
            verifyTls: this.target.verifyTls,
            caPem: this.target.caPem,
            maxResponseBytes: this.timing.maxResponseBytes,
            policy: this.target.policy,
          },
        );
      } catch (e) {
        if (!isRedfishError(e) || this.signal?.aborted) throw e;
        failure = e;
      }
      this.record({
        at: at.toISOString(),
        method,
        path: url.pathname + url.search,
        status: answer?.status ?? null,
        duration_ms: Math.round(performance.now() - started),
        ...(body !== undefined ? { request: masked(body) } : {}),
        ...(answer && answer.text ? { response: excerpt(answer.text) } : {}),
        ...(failure ? { error: failure.message } : {}),
        ...(quirk ? { quirk } : {}),
      });
      if (failure) {
        // a connection that failed: repeat a GET/PATCH/DELETE; a POST only if the BMC cannot have seen it
        if (failure.kind !== "unreachable" || attempt >= this.timing.retries || !(idempotent || neverSent(failure))) throw failure;
        quirk = "connection_lost";
        await this.sleep(this.backoff(attempt++));
        continue;
      }
      const a = answer!;
      if (a.status === 401 && this.auth.kind === "session" && !o.login && !relogged) {
        relogged = true;
        await this.login();
        quirk = "session_expired";
        continue;
      }
      if (attempt < this.timing.retries && isNotReady(a.status, a.json)) {
        quirk = "not_ready";
        await this.sleep(retryAfterMs(a.headers["retry-after"], 30_000) ?? this.backoff(attempt));
        attempt++;
        continue;
      }
      if (attempt < this.timing.retries && a.status >= 500 && idempotent) {
        quirk = "server_error";
        await this.sleep(this.backoff(attempt++));
        continue;
      }
      return a;
    }
  }

  /** The answer when it is a success; otherwise the failure it stands for. */
  expect(a: Answer, method: string, path: string, refusal: "refused" | "media_refused" = "refused"): Answer {
    if (ok(a.status)) return a;
    const m = redfishMessages(a.json);
    const said = m.text || a.text.slice(0, 200).trim();
    const where = `${method} ${path}`;
    const detail = { status: a.status, messageIds: m.ids, path };
    if (a.status === 401 || a.status === 403)
      throw new RedfishError(
        "credentials_refused",
        a.status === 401
          ? `the BMC refused the credentials of ${this.target.username} (${where}: 401)`
          : `the account ${this.target.username} may not do this (${where}: 403${said ? `, ${said}` : ""})`,
        detail,
      );
    if (a.status >= 500)
      throw new RedfishError(
        isNotReady(a.status, a.json) ? "timeout" : "server_error",
        `${where}: HTTP ${a.status}${said ? `, ${said}` : ""}`,
        detail,
      );
    if (a.status >= 300 && a.status < 400)
      throw new RedfishError(
        "bad_answer",
        `${where}: the BMC redirects to ${a.headers.location ?? "elsewhere"}; store that address instead`,
        detail,
      );
    if (isNotReady(a.status, a.json)) throw new RedfishError("timeout", `${where}: the BMC stayed busy (${said || a.status})`, detail);
    throw new RedfishError(refusal, `${where}: HTTP ${a.status}${said ? `, ${said}` : ""}`, detail);
  }

  private objectOf(a: Answer, path: string): Json {
    if (!a.json || typeof a.json !== "object" || Array.isArray(a.json))
      throw new RedfishError("bad_answer", `GET ${path}: the answer is not a JSON object`, { status: a.status, path });
    return a.json as Json;
  }

  /** A resource, with its ETag (header, else @odata.etag) and the methods its Allow header lists. */
  async get(path: string, quirk?: QuirkId): Promise<Resource> {
    const a = this.expect(await this.call("GET", path, undefined, quirk ? { quirk } : {}), "GET", path);
    const json = this.objectOf(a, path);
    const etag = a.headers.etag ?? (typeof json["@odata.etag"] === "string" ? json["@odata.etag"] : undefined);
    return {
      path,
      json,
      ...(etag ? { etag } : {}),
      allow: (a.headers.allow ?? "")
        .split(",")
        .map((m) => m.trim().toUpperCase())
        .filter(Boolean),
    };
  }

  /** Every member of a collection, following Members@odata.nextLink pages. */
  async members(path: string): Promise<string[]> {
    const out: string[] = [];
    const seen = new Set<string>();
    for (let page: string | undefined = path; page && !seen.has(page) && seen.size < 100;) {
      seen.add(page);
      const c = await this.get(page);
      if (!Array.isArray(c.json.Members)) throw new RedfishError("bad_answer", `${page} is not a collection (no Members)`, { path: page });
      for (const m of c.json.Members) {
        const id = odataId(m);
        if (id) out.push(id);
      }
      page = typeof c.json["Members@odata.nextLink"] === "string" ? c.json["Members@odata.nextLink"] : undefined;
    }
    return out;
  }

  /** Waits, on the client's clock (tests give a fast one). */
  pause(ms: number): Promise<void> {
    return this.sleep(ms);
  }

  get timings(): RedfishTiming {
    return this.timing;
  }
}
