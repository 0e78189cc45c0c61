import { isIP } from "node:net";

// Who is on the other end of a request, for per-address rate limits and anonymous analytics.
// Pure: no I/O, no configuration read here (the caller passes the trust rule from lib/env).
//
// The model: X-Forwarded-For as the app sees it always ends with the address of the peer that
// opened the connection to this process. The GPUForge servers (`npm start`'s server and the
// ingest server) append the socket address to whatever arrived (recordPeerAddress); when a
// request carries no X-Forwarded-For at all, Next.js sets it to the socket address. Every entry
// left of that one was written by someone else: by a proxy we trust, or by the client itself.
// So the client is found by walking from the right over the proxies we trust, and no further:
//   - no trust configured: the rightmost entry, the socket address;
//   - TRUSTED_PROXY_HOPS=n: n entries further left (each trusted proxy appended one);
//   - TRUSTED_PROXIES=<CIDR list>: skip entries inside those networks, take the first outside.
// A value a client puts in the header can therefore never be mistaken for its address unless a
// trusted proxy vouched for it.

export type ProxyTrust = { hops: number; cidrs: Cidr[] };
export interface Cidr {
  family: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

/** Parses `10.0.0.0/8, 2001:db8::/32, 192.0.2.7` into CIDRs; null when an entry is not one. */
export function parseCidrList(text: string): Cidr[] | null {
  const out: Cidr[] = [];
  for (const raw of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [addr, bits, extra] = raw.split("/");
    if (extra !== undefined || !addr) return null;
    const bytes = addressBytes(addr);
    if (!bytes) return null;
    const max = bytes.length * 8;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
    out.push({ family: bytes.length === 4 ? 4 : 6, bytes, prefix });
  }
  return out;
}

/** The client's address per the trust rule; "unknown" when nothing usable was given. */
export function clientAddress(forwardedFor: string | null | undefined, trust: ProxyTrust): string {
  const chain = (forwardedFor ?? "")
    .split(",")
    .map((s) => normaliseAddress(s.trim()))
    .filter((s): s is string => s !== null);
  if (chain.length === 0) return "unknown";
  if (trust.cidrs.length > 0) {
    for (let i = chain.length - 1; i >= 0; i--) if (!trust.cidrs.some((c) => inCidr(chain[i]!, c))) return chain[i]!;
    return chain[0]!;
  }
  // fewer entries than trusted hops: the request did not pass all proxies; the leftmost is the best we have
  return chain[Math.max(0, chain.length - 1 - trust.hops)]!;
}

/** What a GPUForge server does to each request it accepts: appends the socket's address. */
export function withPeerAddress(forwardedFor: string | string[] | null | undefined, socketAddress: string | undefined): string {
  const existing = (Array.isArray(forwardedFor) ? forwardedFor.join(", ") : (forwardedFor ?? "")).trim();
  const peer = socketAddress ?? "unknown";
  return existing ? `${existing}, ${peer}` : peer;
}

/**
 * The unit a per-address limit should count: an IPv4 address as it is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so counting single IPv6 addresses would give each
 * guesser 2^64 fresh counters). Anything else is returned unchanged.
 */
export function addressScope(address: string): string {
  const bytes = addressBytes(address);
  if (!bytes || bytes.length === 4) return address;
  const groups = Array.from({ length: 4 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as IPv4; anything that is not an address is dropped. */
function normaliseAddress(s: string): string | null {
  const bare = s.startsWith("[") && s.includes("]") ? s.slice(1, s.indexOf("]")) : s;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  const addr = mapped ? mapped[1]! : bare;
  return isIP(addr) ? addr.toLowerCase() : null;
}

export function inCidr(address: string, c: Cidr): boolean {
  const bytes = addressBytes(address);
  if (!bytes || bytes.length !== c.bytes.length) return false;
  let bits = c.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

function addressBytes(address: string): Uint8Array | null {
  const a = normaliseAddress(address);
  if (!a) return null;
  if (isIP(a) === 4) return Uint8Array.from(a.split(".").map(Number));
  const [head, tail] = a.split("::") as [string, string | undefined];
  const groups = (x: string | undefined) => (x ? x.split(":") : []);
  let parts = groups(head);
  let right = groups(tail);
  // an embedded IPv4 tail (::ffff:1.2.3.4 forms that were not mapped above)
  const last = right.length ? right[right.length - 1]! : parts[parts.length - 1];
  if (last?.includes(".")) {
    const v4 = last.split(".").map(Number);
    const hex = [((v4[0]! << 8) | v4[1]!).toString(16), ((v4[2]! << 8) | v4[3]!).toString(16)];
    if (right.length) right = [...right.slice(0, -1), ...hex];
    else parts = [...parts.slice(0, -1), ...hex];
  }
  const fill = tail === undefined ? [] : Array(8 - parts.length - right.length).fill("0");
  const all = [...parts, ...fill, ...right];
  if (all.length !== 8) return null;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    const v = parseInt(g || "0", 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}
