import { MAX_JSON_NESTING, valueNestsDeeper } from "@/lib/http/json-nesting";
import type { Json } from "../expressions";

// What one tool-call attempt came to, and whether another attempt may help. Pure.

export type CallResult =
  | {
      ok: true;
      output: { status: number; headers: Record<string, string>; body: Json };
      bytes: number;
      durationMs: number;
      httpStatus: number;
    }
  | { ok: false; error: string; retryable: boolean; durationMs: number; httpStatus?: number };

/** Statuses worth another try unless the step names its own: the server may answer next time. */
const DEFAULT_RETRY_STATUSES = [408, 429, 500, 502, 503, 504];

function statusRetries(status: number, onStatus: readonly number[] | null | undefined): boolean {
  return (onStatus?.length ? onStatus : DEFAULT_RETRY_STATUSES).includes(status);
}

/** Reads a response body within the output limit, as JSON when it says so, else as text. */
export async function readResponse(
  res: Response,
  maxBytes: number,
  started: number,
  onStatus: readonly number[] | null | undefined,
  /** quoteErrors false: a failed answer's body is not quoted (the request carried a secret the server may echo in part) */
  opts: { quoteErrors?: boolean } = {},
): Promise<CallResult> {
  const durationMs = () => Date.now() - started;
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return {
          ok: false,
          error: `the response is larger than the output limit of ${maxBytes} bytes`,
          retryable: false,
          durationMs: durationMs(),
          httpStatus: res.status,
        };
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const type = res.headers.get("content-type") ?? "";
  let body: Json = text;
  if (/\bjson\b/i.test(type) && text.trim()) {
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = text;
    }
    // an answer nested past the bound would overflow what walks it next (redaction, storage)
    if (valueNestsDeeper(body))
      return {
        ok: false,
        error: `the response's JSON is nested more than ${MAX_JSON_NESTING} levels deep`,
        retryable: false,
        durationMs: durationMs(),
        httpStatus: res.status,
      };
  }
  if (res.status < 200 || res.status >= 300) {
    const snippet = opts.quoteErrors === false ? "" : (typeof body === "string" ? body : JSON.stringify(body)).slice(0, 300);
    return {
      ok: false,
      error: `HTTP ${res.status}${snippet ? `: ${snippet}` : opts.quoteErrors === false ? " (the answer is not quoted: the request carried a secret)" : ""}`,
      retryable: statusRetries(res.status, onStatus),
      durationMs: durationMs(),
      httpStatus: res.status,
    };
  }
  const headers: Record<string, string> = type ? { "content-type": type } : {};
  const output = { status: res.status, headers, body };
  return { ok: true, output, bytes: Buffer.byteLength(JSON.stringify(output)), durationMs: durationMs(), httpStatus: res.status };
}

/** A call that never got a response: a timeout or a network error is always worth another try. */
export function failedCall(e: unknown, timeoutS: number, started: number): CallResult {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const timedOut = err.name === "TimeoutError" || err.name === "AbortError";
  const why = timedOut
    ? `no response within ${timeoutS} s`
    : `request failed: ${err.cause?.code ?? err.cause?.message ?? err.message ?? String(e)}`;
  return { ok: false, error: why, retryable: true, durationMs: Date.now() - started };
}
