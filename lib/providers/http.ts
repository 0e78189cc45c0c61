import { ProviderError } from "./types";
import type { ProviderName } from "./vocabulary";

// The wire under every provider's api.ts: one request with a deadline, and the answers every
// provider documents the same way turned into ProviderError kinds — 429 with Retry-After (seconds
// or an HTTP date, RFC 9110 §10.2.3), 5xx, timeouts and refused connections. What a 4xx body means
// is the provider's own (its api.ts reads it). Keys travel in headers only, never in URLs, so no
// error, log line or proxy access log can carry one.

export interface ProviderResponse {
  status: number;
  headers: Headers;
  /** the parsed JSON body, or null when there was none or it was not JSON */
  body: unknown;
  text: string;
}

export interface ProviderRequest {
  provider: ProviderName;
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  /** what the call is, for messages ("launch", "list offers") */
  what: string;
}

/** Seconds to wait from a Retry-After value (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), 86_400);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.min(Math.ceil((at - now) / 1000), 86_400));
}

/** The largest answer read from a provider: a listing of every offer is well under it; past it, the call fails (nothing is buffered beyond it). */
export const PROVIDER_MAX_BODY_BYTES = 8 * 1024 * 1024;
const TOO_LARGE = "\u0000too large";

/** The body as text, reading at most `limit` bytes (the deadline's signal still applies); TOO_LARGE past it. */
async function boundedText(res: Response, limit: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => {});
    return TOO_LARGE;
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function providerRequest(r: ProviderRequest): Promise<ProviderResponse> {
  let res: Response;
  try {
    res = await fetch(r.url, {
      method: r.method,
      headers: { accept: "application/json", ...(r.body === undefined ? {} : { "content-type": "application/json" }), ...r.headers },
      body: r.body === undefined ? undefined : JSON.stringify(r.body),
      signal: AbortSignal.timeout(r.timeoutMs),
      redirect: "error",
    });
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    throw new ProviderError(
      r.provider,
      "unavailable",
      timedOut ? `${r.what}: no answer within ${r.timeoutMs} ms` : `${r.what}: could not reach the provider (${causeOf(e)})`,
    );
  }
  let text: string;
  try {
    text = await boundedText(res, PROVIDER_MAX_BODY_BYTES);
  } catch (e) {
    if (e instanceof ProviderError) throw e;
    const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    throw new ProviderError(
      r.provider,
      "unavailable",
      timedOut ? `${r.what}: the answer did not finish within ${r.timeoutMs} ms` : `${r.what}: the answer broke off (${causeOf(e)})`,
    );
  }
  if (text === TOO_LARGE)
    throw new ProviderError(r.provider, "unavailable", `${r.what}: the answer is larger than ${PROVIDER_MAX_BODY_BYTES} bytes`);
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (res.status === 429) {
    const after = retryAfterSeconds(res.headers.get("retry-after"));
    throw new ProviderError(
      r.provider,
      "rate_limited",
      `${r.what}: rate limited${after === undefined ? "" : `, retry after ${after} s`}`,
      after,
    );
  }
  if (res.status >= 500)
    throw new ProviderError(r.provider, "unavailable", `${r.what}: the provider answered ${res.status}${snippet(text)}`);
  return { status: res.status, headers: res.headers, body, text };
}

/** A short, key-free excerpt of a body for messages. */
export function snippet(text: string): string {
  const t = text.replace(/\s+/g, " ").trim().slice(0, 160);
  return t ? `: ${t}` : "";
}

function causeOf(e: unknown): string {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String((cause as { code: unknown }).code) : "";
  return code || (cause instanceof Error ? cause.message : String(cause));
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Dollars (a float, as providers quote them) to whole cents, rounded up: what we are charged is never understated. */
export function dollarsToCentsUp(dollars: number): number {
  // 1e-9 absorbs binary noise (2.69 * 100 = 268.99999999999997)
  return Math.ceil(dollars * 100 - 1e-9);
}
