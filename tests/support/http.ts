import { inject } from "vitest";

export interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON from the server under test
  headers: Headers;
}

export function randomClientAddress(): string {
  return `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
}

/** A small HTTP client for the API under test: JSON in and out, bearer key optional. */
export async function api(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<Reply> {
  // The e2e server trusts one proxy hop (TRUSTED_PROXY_HOPS=1): the test client plays that proxy
  // and gives each request a client address of its own, so per-address limits of one test never
  // spill into another. Tests about addresses pass their own X-Forwarded-For.
  const headers: Record<string, string> = { "x-forwarded-for": randomClientAddress(), ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: BodyInit | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody as BodyInit;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(inject("baseUrl") + path, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export function expectErrorShape(reply: Reply, code: string) {
  if (typeof reply.body !== "object" || reply.body === null || !("error" in reply.body)) {
    throw new Error(`expected an error body, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
  }
  const e = reply.body.error;
  if (e.code !== code || typeof e.message !== "string" || !Array.isArray(e.details)) {
    throw new Error(`expected error code ${code}, got ${JSON.stringify(e)}`);
  }
}
