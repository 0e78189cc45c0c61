import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { nodeAddressPolicy } from "@/lib/env";
import { workloadAccessSecret } from "@/lib/fleet/access-secret";
import { nodeAddressProblem } from "@/lib/fleet/node-address";
import { logger } from "@/lib/logger";
import { GATEWAY_ENDPOINT_ROUTES, GATEWAY_POD_ROUTES } from "./statements";

// Where each endpoint's replicas and each running pod's ports serve, as this gateway process knows
// it: re-read from the database every GATEWAY_REFRESH_MS (and at once for one it has not heard of).
// A replica is a candidate when it is live, its agent reported the host port its access guard
// listens on, and its node is in service with an address of the fleet; whether it takes traffic is
// the prober's call. Every target carries its placement's access secret, which the agent's guard
// asks of each request (lib/fleet/workload-access.ts).

export interface ReplicaTarget {
  id: string;
  /** the node's registered address: the only host the gateway ever connects to */
  host: string;
  port: number;
  /** what the node's access guard asks of every request for this placement */
  secret: string;
}

export interface EndpointRoute {
  id: string;
  tenantId: string;
  healthPath: string;
  stopped: boolean;
  replicas: ReplicaTarget[];
}

export interface PodRoute {
  id: string;
  tenantId: string;
  host: string;
  /** host port of each container port the gateway may reach (never SSH's 22 of a pod with a key: sshd guards that one) */
  ports: Map<number, number>;
  secret: string;
}

/** Ports the gateway connects to on a node: never a privileged port of the node's own. */
const routablePort = (p: unknown): p is number => Number.isInteger(p) && (p as number) >= 1024 && (p as number) <= 65_535;

export class RoutingTable {
  private routes = new Map<string, EndpointRoute>();
  private pods = new Map<string, PodRoute>();
  private loading: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private loadedAt = 0;

  get(endpointId: string): EndpointRoute | undefined {
    return this.routes.get(endpointId);
  }

  /** Every replica target (what the prober probes), with its endpoint's health path. */
  targets(): Array<ReplicaTarget & { healthPath: string; endpointId: string }> {
    return [...this.routes.values()].flatMap((e) => e.replicas.map((r) => ({ ...r, healthPath: e.healthPath, endpointId: e.id })));
  }

  /**
   * Re-reads the table, with a read that starts after this call: what was committed before it is in
   * the table when it resolves. A read already under way may predate the caller's write, so callers
   * arriving meanwhile share one more read queued behind it.
   */
  refresh(): Promise<void> {
    if (!this.loading) return (this.loading = this.startLoad());
    this.queued ??= this.loading
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return (this.loading = this.startLoad());
      });
    return this.queued;
  }

  private startLoad(): Promise<void> {
    const loading = this.load().finally(() => {
      if (this.loading === loading) this.loading = null;
    });
    return loading;
  }

  /** An endpoint not in the table may have been created a moment ago: one fresh read, at most every 100 ms. */
  async lookup(endpointId: string): Promise<EndpointRoute | undefined> {
    const known = this.routes.get(endpointId);
    if (known || Date.now() - this.loadedAt < 100) return known;
    await this.refresh();
    return this.routes.get(endpointId);
  }

  /** A running pod's route; one that started a moment ago gets one fresh read, as endpoints do. */
  async lookupPod(podId: string): Promise<PodRoute | undefined> {
    const known = this.pods.get(podId);
    if (known || Date.now() - this.loadedAt < 100) return known;
    await this.refresh();
    return this.pods.get(podId);
  }

  protected async load(): Promise<void> {
    const [endpoints, pods] = await Promise.all([run(pool(), GATEWAY_ENDPOINT_ROUTES), run(pool(), GATEWAY_POD_ROUTES)]);
    const policy = nodeAddressPolicy();
    // a node address the policy does not allow (tightened since it registered, say) is never connected to
    const allowed = (host: string, what: string) => {
      const problem = nodeAddressProblem(host, policy);
      if (problem) logger.warn("gateway: workload on a node whose address is not allowed; not routed", { workload: what, problem });
      return !problem;
    };
    const next = new Map<string, EndpointRoute>();
    for (const r of endpoints) {
      const replicas = (r.replicas as Array<{ id: string; host: string; port: number; fence: string }>)
        .filter((x) => routablePort(x.port) && allowed(x.host, `replica ${x.id}`))
        .map((x) => ({ id: x.id, host: x.host, port: x.port, secret: workloadAccessSecret("replica", x.id, x.fence) }));
      next.set(r.id, { id: r.id, tenantId: r.tenant_id, healthPath: r.health_path, stopped: r.stop_requested, replicas });
    }
    const nextPods = new Map<string, PodRoute>();
    for (const p of pods) {
      if (!allowed(p.host, `pod ${p.id}`)) continue;
      const ports = new Map<number, number>();
      for (const m of (p.ports as Array<{ container_port: number; host_port: number }> | null) ?? [])
        if (!(m.container_port === 22 && p.has_ssh_key) && routablePort(m.host_port)) ports.set(m.container_port, m.host_port);
      nextPods.set(p.id, { id: p.id, tenantId: p.tenant_id, host: p.host, ports, secret: workloadAccessSecret("pod", p.id, p.fence) });
    }
    this.routes = next;
    this.pods = nextPods;
    this.loadedAt = Date.now();
  }
}
