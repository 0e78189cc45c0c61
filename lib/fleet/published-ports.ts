// The host ports node agents publish workloads' ports on (a pod's SSH, the access guards of
// replicas' serving ports and pods' HTTP ports), pure: the range the agents are configured with
// (their AGENT_PUBLISHED_PORTS, default 40000-44999), which the control plane is told too. A port an
// agent reports outside it is refused, so a compromised node cannot point the gateway or a tenant's
// SSH at any other service of the node's address (its sshd, an exporter, a database).

export const DEFAULT_PUBLISHED_PORTS = "40000-44999";

export interface PortRange {
  min: number;
  max: number;
}

/** `40000-44999` → the range; null when it is not one of unprivileged ports. */
export function parsePortRange(text: string): PortRange | null {
  const m = /^\s*(\d{4,5})\s*-\s*(\d{4,5})\s*$/.exec(text);
  if (!m) return null;
  const [min, max] = [Number(m[1]), Number(m[2])];
  return min >= 1024 && max <= 65_535 && min <= max ? { min, max } : null;
}

/** Why a node may not report this host port, or null when it may. */
export function publishedPortProblem(port: number, range: PortRange): string | null {
  return port >= range.min && port <= range.max
    ? null
    : `Outside the agents' published port range ${range.min}-${range.max} (AGENT_PUBLISHED_PORTS)`;
}
