import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { bmcAddressProblem, literalAddress, type BmcAddressPolicy } from "./address-policy";
import { RedfishError } from "./errors";

// One HTTP exchange with a BMC, over node:http/https rather than fetch because a BMC needs what
// fetch does not give per request: certificate checks that can be turned off or pinned to the BMC's
// own CA, a connect-time check of the address a name resolves to (address-policy.ts), redirects
// never followed (an answer, not an instruction), a cap on the answer's size, and a fresh
// connection per request closed after it — sushy sends `Connection: close` because "field studies
// reveal that some BMCs choke at long-running persistent HTTP connections", and asks for identity
// encoding because compressed answers change some BMCs' ETags into weak ones.

export interface TransportOptions {
  timeoutMs: number;
  verifyTls: boolean;
  /** PEM of the CA (or the BMC's own certificate) to trust instead of the system's roots */
  caPem?: string | null;
  maxResponseBytes: number;
  policy: BmcAddressPolicy;
  /** aborts the request; the promise rejects with the signal's reason */
  signal?: AbortSignal;
}

export interface Answer {
  status: number;
  /** lower-case names; repeated headers joined with ", " */
  headers: Record<string, string>;
  text: string;
  /** the body parsed as JSON; undefined when empty or not JSON */
  json: unknown;
}

const TLS_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
]);

/** A resolver that answers only with addresses the policy allows (DNS cannot point a stored name at loopback later). */
function guardedLookup(policy: BmcAddressPolicy): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (err, addresses) => {
      if (err) return callback(err);
      const allowed = addresses.filter((a) => bmcAddressProblem(a.address, policy) === null);
      if (allowed.length === 0) {
        const e = new Error(`${hostname} resolves to ${bmcAddressProblem(addresses[0]!.address, policy)}`) as NodeJS.ErrnoException;
        e.code = "EBMCADDRESS";
        return callback(e);
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  }) as LookupFunction;
}

function describeNetworkError(e: NodeJS.ErrnoException, url: URL, timeoutMs: number): RedfishError {
  const where = url.host;
  if (e.code === "EBMCADDRESS") return new RedfishError("address_refused", e.message);
  if (e.code && TLS_CODES.has(e.code))
    return new RedfishError(
      "tls_untrusted",
      `${where} presented a certificate that is not trusted (${e.code}): give the BMC's CA certificate, or set verify_tls to false`,
    );
  if (e.code === "ETIMEDOUT_BMC")
    return new RedfishError("unreachable", `${where} did not answer within ${Math.round(timeoutMs / 1000)} s`);
  if (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN")
    return new RedfishError("unreachable", `${url.hostname} does not resolve (${e.code})`);
  if (e.code === "ECONNREFUSED") return new RedfishError("unreachable", `${where} refused the connection`);
  if (e.code === "EHOSTUNREACH" || e.code === "ENETUNREACH")
    return new RedfishError("unreachable", `${where} cannot be reached (${e.code})`);
  if (e.code === "ECONNRESET" || e.code === "EPIPE") return new RedfishError("unreachable", `${where} closed the connection (${e.code})`);
  return new RedfishError("unreachable", `${where}: ${e.message}`);
}

/** Whether a failure happened before the BMC can have seen the request (safe to repeat even a POST). */
export function neverSent(e: unknown): boolean {
  return (
    e instanceof RedfishError && e.kind === "unreachable" && /refused the connection|does not resolve|cannot be reached/.test(e.message)
  );
}

export function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  opts: TransportOptions,
): Promise<Answer> {
  const literal = literalAddress(url.hostname);
  if (literal) {
    const problem = bmcAddressProblem(literal, opts.policy);
    if (problem) return Promise.reject(new RedfishError("address_refused", problem));
  }
  const secure = url.protocol === "https:";
  const lib = secure ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    const fail = (e: RedfishError) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      reject(opts.signal?.aborted ? (opts.signal.reason as Error) : e);
    };
    const req = lib.request(
      url,
      {
        method,
        agent: false,
        headers: {
          accept: "application/json",
          "odata-version": "4.0",
          "accept-encoding": "identity",
          connection: "close",
          "user-agent": "GPUForge-Redfish/1.0",
          ...(body !== undefined
            ? { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(body)) }
            : {}),
          ...headers,
        },
        ...(literal ? {} : { lookup: guardedLookup(opts.policy) }),
        ...(secure ? { rejectUnauthorized: opts.verifyTls, ...(opts.caPem ? { ca: opts.caPem } : {}) } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > opts.maxResponseBytes) {
            res.destroy();
            fail(new RedfishError("bad_answer", `${url.pathname}: the answer is larger than ${opts.maxResponseBytes} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on("error", (e: NodeJS.ErrnoException) => fail(describeNetworkError(e, url, opts.timeoutMs)));
        res.on("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          const text = Buffer.concat(chunks).toString("utf8");
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
          let json: unknown = undefined;
          if (text.trim()) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: out, text, json });
        });
      },
    );
    const deadline = setTimeout(() => {
      const e = new Error("timed out") as NodeJS.ErrnoException;
      e.code = "ETIMEDOUT_BMC";
      req.destroy(e);
    }, opts.timeoutMs);
    req.on("error", (e: NodeJS.ErrnoException) => fail(describeNetworkError(e, url, opts.timeoutMs)));
    req.end(body);
  });
}
