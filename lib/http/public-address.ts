import { isIP } from "node:net";
import { inCidr, parseCidrList, type Cidr } from "./client-address";

// Whether an address is on the public internet, pure: what the platform may call on a tenant's
// behalf (pipelines' http steps) without an operator saying otherwise. Never reached unless the
// operator lists the network (TOOL_CALL_ALLOWED_NETWORKS): loopback, private and shared (CGNAT)
// networks, link-local (the clouds' metadata services live there: 169.254.169.254, fd00:ec2::254
// in the unique-local range), unspecified, multicast, broadcast, documentation, benchmarking and
// reserved ranges; IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged by it.

const RANGES: Array<[string, string]> = [
  ["loopback", "127.0.0.0/8, ::1/128"],
  ["private", "10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7"],
  ["shared (carrier-grade NAT)", "100.64.0.0/10"],
  ["link-local (where cloud metadata services answer)", "169.254.0.0/16, fe80::/10"],
  ["unspecified", "0.0.0.0/8, ::/128"],
  ["multicast", "224.0.0.0/4, ff00::/8"],
  [
    "reserved",
    "240.0.0.0/4, 255.255.255.255/32, 192.0.0.0/24, 192.0.2.0/24, 198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 100::/64, 2001:2::/48, 2001:10::/28",
  ],
];
const CLASSES = RANGES.map(([label, list]) => ({ label, cidrs: parseCidrList(list)! }));

/** IPv6 forms carrying an IPv4 address: IPv4-mapped, NAT64 (well-known and local), 6to4. */
function embeddedIpv4(ip: string): string | null {
  if (isIP(ip) !== 6) return null;
  const groups = expand(ip);
  if (!groups) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!); // ::ffff:a.b.c.d
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6]!, groups[7]!); // 64:ff9b::/96
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups[2] === 1) return v4(groups[6]!, groups[7]!); // 64:ff9b:1::/48
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!); // 2002::/16
  return null;
}

function expand(ip: string): number[] | null {
  const [head, tail] = ip.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  let left = part(head);
  let right = part(tail);
  const last = (right.length ? right : left).at(-1);
  if (last?.includes(".")) {
    const q = last.split(".").map(Number);
    const hex = [((q[0]! << 8) | q[1]!).toString(16), ((q[2]! << 8) | q[3]!).toString(16)];
    if (right.length) right = [...right.slice(0, -1), ...hex];
    else left = [...left.slice(0, -1), ...hex];
  }
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill("0");
  const all = [...left, ...fill, ...right].map((g) => parseInt(g || "0", 16));
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

/**
 * Why the platform may not call this address for a tenant, or null when it may: a public address,
 * or one inside a network the operator allowed.
 */
export function outboundAddressProblem(address: string, allowed: readonly Cidr[] = []): string | null {
  const ip = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (!isIP(ip)) return `${address} is not an IP address`;
  if (allowed.some((c) => inCidr(ip, c))) return null;
  const inner = embeddedIpv4(ip);
  for (const candidate of inner ? [ip, inner] : [ip]) {
    const hit = CLASSES.find((k) => k.cidrs.some((c) => inCidr(candidate, c)));
    if (hit && !allowed.some((c) => inCidr(candidate, c))) return `${address} is a ${hit.label} address`;
  }
  return null;
}
