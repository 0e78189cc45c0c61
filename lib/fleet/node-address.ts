import { isIP } from "node:net";
import { inCidr, parseCidrList, type Cidr } from "@/lib/http/client-address";

// Where the fleet reaches a node: the address its agent reports at registration. Tenants' SSH
// commands name it, and the inference gateway connects to it — to it alone, on ports the agent
// published — so it must be the node's, never somewhere else the control plane can reach (pure).
//
// Never accepted, whatever the configuration: names (DNS could point anywhere later), unspecified,
// link-local (the clouds' metadata service lives at 169.254.169.254), multicast and reserved
// addresses. Loopback only in development and tests, or when NODE_ADDRESS_NETWORKS lists it.
// With NODE_ADDRESS_NETWORKS set, the address must be inside one of its networks: set it to the
// nodes' own networks, leaving out the control plane's, the database's and anything internal.

const NEVER = parseCidrList("0.0.0.0/8, 169.254.0.0/16, 224.0.0.0/4, 240.0.0.0/4, ::/128, fe80::/10, ff00::/8, ::ffff:0:0/96")!;
const LOOPBACK = parseCidrList("127.0.0.0/8, ::1/128")!;

export interface NodeAddressPolicy {
  /** NODE_ADDRESS_NETWORKS: empty means any unicast address but loopback */
  networks: Cidr[];
  /** loopback (one machine playing a fleet: development, tests, the simulator) */
  allowLoopback: boolean;
}

/** The address as stored (lower case, IPv4 as dotted quad), or null when it is not an IP literal. */
export function normaliseNodeAddress(address: string): string | null {
  const a = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  const bare = mapped ? mapped[1]! : a;
  return isIP(bare) ? bare : null;
}

/** Why a node may not have this address, or null when it may. */
export function nodeAddressProblem(address: string, policy: NodeAddressPolicy): string | null {
  const a = normaliseNodeAddress(address);
  if (!a) return "Must be the node's IP address (IPv4 or IPv6), not a name";
  if (NEVER.some((c) => inCidr(a, c))) return "Not an address a node can be reached at (unspecified, link-local, multicast or reserved)";
  const listed = policy.networks.some((c) => inCidr(a, c));
  if (LOOPBACK.some((c) => inCidr(a, c)) && !policy.allowLoopback && !listed)
    return "Loopback is a node's address only in development (or when NODE_ADDRESS_NETWORKS lists it)";
  if (policy.networks.length > 0 && !listed) return "Outside the networks nodes may have addresses in (NODE_ADDRESS_NETWORKS)";
  return null;
}
