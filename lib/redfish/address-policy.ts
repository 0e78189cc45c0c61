import { isIP } from "node:net";
import { inCidr, parseCidrList, type Cidr } from "@/lib/http/client-address";

// Where the control plane may send a BMC request (pure). A BMC URL is typed by an operator, and
// what the BMC answers is shown on the node page: a BMC "at" the control plane's own loopback or at
// a cloud's metadata service (169.254.169.254) would turn the provisioning log into a window on
// services nobody meant to expose. So:
//   - never: unspecified, multicast and reserved addresses (nothing answers Redfish there);
//   - only when BMC_NETWORKS lists them: loopback and link-local (the metadata service lives in
//     169.254.0.0/16). Listing them is the operator's explicit choice, made at deploy time where a
//     stolen operator key cannot make it; the embedded demo lists 127.0.0.0/8 for its simulated BMCs;
//   - with BMC_NETWORKS set, only addresses inside it (set it to the management networks).
// The check runs on the URL's literal address when it has one, and on every address a name resolves
// to at connect time (lib/redfish/transport.ts), so DNS cannot point a stored name elsewhere later.

const NEVER = parseCidrList("0.0.0.0/8, 224.0.0.0/4, 240.0.0.0/4, ::/128, ff00::/8")!;
const EXPLICIT_ONLY = parseCidrList("127.0.0.0/8, ::1/128, 169.254.0.0/16, fe80::/10, fd00:ec2::254/128")!;

export interface BmcAddressPolicy {
  /** BMC_NETWORKS: empty means any unicast address except loopback and link-local */
  networks: Cidr[];
}

/** An IPv4-mapped IPv6 address as IPv4; anything else as it is (lower case). */
function bare(address: string): string {
  const a = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1]! : a;
}

/** Why a BMC request may not go to this IP address, or null when it may. */
export function bmcAddressProblem(address: string, policy: BmcAddressPolicy): string | null {
  const a = bare(address);
  if (!isIP(a)) return `${address} is not an IP address`;
  if (NEVER.some((c) => inCidr(a, c))) return `${a} is an unspecified, multicast or reserved address`;
  const listed = policy.networks.some((c) => inCidr(a, c));
  if (EXPLICIT_ONLY.some((c) => inCidr(a, c)) && !listed)
    return `${a} is a loopback or link-local address (where the control plane's own services and cloud metadata live); BMCs there are refused unless BMC_NETWORKS lists the network`;
  if (policy.networks.length > 0 && !listed) return `${a} is outside the networks BMCs may be in (BMC_NETWORKS)`;
  return null;
}

/** The URL's host when it is an IP literal (brackets removed), else null (a name, resolved at connect time). */
export function literalAddress(hostname: string): string | null {
  const a = bare(hostname);
  return isIP(a) ? a : null;
}
