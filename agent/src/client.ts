// The control plane's HTTP API, as an agent uses it: every call retries with exponential backoff
// and jitter while the control plane is down or overloaded, and gives up only on answers that
// retrying cannot change (4xx other than 408/429). Given several addresses (instances of the
// control plane without a load balancer in front), a call that does not get through tries the
// next one, and the client stays there while it answers.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
}

/** What the client needs of fetch (the simulator passes one that shares a bounded set of connections). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

export interface ClientOptions {
  baseUrl: string | readonly string[];
  key: string;
  /** total time to keep retrying one call; Infinity for "until it works" */
  retryForMs?: number;
  maxBackoffMs?: number;
  log?: (m: string) => void;
  /** the global fetch unless given */
  fetch?: FetchLike;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function backoffMs(attempt: number, maxMs = 30_000): number {
  const base = Math.min(maxMs, 250 * 2 ** attempt);
  return Math.round(base / 2 + Math.random() * (base / 2));
}

export function createClient(opts: ClientOptions) {
  const log = opts.log ?? (() => {});
  const baseUrls = typeof opts.baseUrl === "string" ? [opts.baseUrl] : opts.baseUrl;
  const send: FetchLike = opts.fetch ?? fetch;
  if (baseUrls.length === 0) throw new Error("createClient: no control-plane address");
  let current = 0;
  async function call<T>(method: string, path: string, body?: unknown, retryForMs = opts.retryForMs ?? 60_000): Promise<T> {
    const deadline = Date.now() + retryForMs;
    for (let attempt = 0; ; attempt++) {
      const baseUrl = baseUrls[current]!;
      try {
        const res = await send(baseUrl + path, {
          method,
          headers: { authorization: `Bearer ${opts.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        const parsed: unknown = text ? JSON.parse(text) : null;
        if (res.ok) return parsed as T;
        if (res.status < 500 && res.status !== 408 && res.status !== 429) throw new ApiError(res.status, parsed);
        log(`${method} ${path}: HTTP ${res.status}, retrying`);
        if (res.status >= 500) current = (current + 1) % baseUrls.length;
      } catch (e) {
        if (e instanceof ApiError) throw e;
        log(`${method} ${baseUrl}${path}: ${(e as Error).message}, retrying`);
        current = (current + 1) % baseUrls.length;
      }
      if (Date.now() >= deadline) throw new Error(`${method} ${path}: control plane unreachable for ${Math.round(retryForMs / 1000)} s`);
      await sleep(Math.min(backoffMs(attempt, opts.maxBackoffMs), Math.max(0, deadline - Date.now())));
    }
  }
  return { call };
}

export type Client = ReturnType<typeof createClient>;
