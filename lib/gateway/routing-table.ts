import "server-only";
import { pool } from "@/lib/db/client";
import { nodeAddressPolicy } from "@/lib/env";
import { nodeAddressProblem } from "@/lib/fleet/node-address";
import { logger } from "@/lib/logger";

// Where each endpoint's replicas serve, as this gateway process knows it: re-read from the
// database every GATEWAY_REFRESH_MS (and at once for an endpoint it has not heard of). A replica
// is a candidate when it is live, its agent reported the host port it published, and its node is
// in service with an address of the fleet; whether it takes traffic is the prober's call.

export interface ReplicaTarget {
  id: string;
  /** the node's registered address: the only host the gateway ever connects to */
  host: string;
  port: number;
}

export interface EndpointRoute {
  id: string;
  tenantId: string;
  healthPath: string;
  stopped: boolean;
  replicas: ReplicaTarget[];
}

export class RoutingTable {
  private routes = new Map<string, EndpointRoute>();
  private loading: Promise<void> | null = null;
  private loadedAt = 0;

  get(endpointId: string): EndpointRoute | undefined {
    return this.routes.get(endpointId);
  }

  /** Every replica target (what the prober probes), with its endpoint's health path. */
  targets(): Array<ReplicaTarget & { healthPath: string; endpointId: string }> {
    return [...this.routes.values()].flatMap((e) => e.replicas.map((r) => ({ ...r, healthPath: e.healthPath, endpointId: e.id })));
  }

  /** Re-reads the table; concurrent callers share one read. */
  refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** An endpoint not in the table may have been created a moment ago: one fresh read, at most every 100 ms. */
  async lookup(endpointId: string): Promise<EndpointRoute | undefined> {
    const known = this.routes.get(endpointId);
    if (known || Date.now() - this.loadedAt < 100) return known;
    await this.refresh();
    return this.routes.get(endpointId);
  }

  private async load(): Promise<void> {
    const { rows } = await pool().query<{
      id: string;
      tenant_id: string;
      health_path: string;
      stop_requested: boolean;
      replicas: Array<{ id: string; host: string; port: number }>;
    }>({
      name: "gateway_routes_v1",
      text: `SELECT e.id, e.tenant_id, e.health_path, e.stop_requested,
                    COALESCE(json_agg(json_build_object('id', r.id, 'host', n.address, 'port', r.host_port) ORDER BY r.started_at) FILTER (WHERE r.id IS NOT NULL), '[]') AS replicas
               FROM endpoints e
               LEFT JOIN (endpoint_replicas r JOIN nodes n ON n.id = r.node_id AND n.address IS NOT NULL AND n.status IN ('available', 'draining'))
                      ON r.endpoint_id = e.id AND r.status <> 'stopped' AND r.host_port IS NOT NULL
              WHERE e.deleted_at IS NULL
              GROUP BY e.id`,
    });
    const policy = nodeAddressPolicy();
    const next = new Map<string, EndpointRoute>();
    for (const r of rows) {
      const replicas = r.replicas.filter((x) => {
        // a node address the policy does not allow (tightened since it registered, say) is never connected to
        const problem = nodeAddressProblem(x.host, policy);
        if (problem) logger.warn("gateway: replica on a node whose address is not allowed; not routed", { replica: x.id, problem });
        return !problem && Number.isInteger(x.port) && x.port >= 1024 && x.port <= 65_535;
      });
      next.set(r.id, { id: r.id, tenantId: r.tenant_id, healthPath: r.health_path, stopped: r.stop_requested, replicas });
    }
    this.routes = next;
    this.loadedAt = Date.now();
  }
}
