// The soak's world, made the way an operator makes one: an operator key (the one thing `npm run
// key` would mint), then clusters, agent keys, tenants with quotas (one of them prepaid, one held
// tight against its quota), tenant keys, GPU rates and alert windows short enough for the run,
// all through the public API. Each cluster wipes and attests its nodes between tenants against the
// policy of the simulated firmware's clean boot, captured as an operator captures one.
import { parseEventLog, replay } from "@/lib/attestation/event-log";
import { referencePolicyFromLog } from "@/lib/attestation/policy";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb } from "@/lib/db/client";
import { createClient, type Client } from "../../agent/src/client";
import { bootEventLog } from "../../agent/src/sim-boot";
import { SIM_DRIVER_VERSION, SIM_VBIOS_VERSION } from "../../agent/src/sim-handover";
import { gpuProfile } from "../../agent/src/sim-signals";
import type { SimCluster } from "../../agent/src/simulator";

export interface SoakTenant {
  id: string;
  name: string;
  key: string;
  quota: number;
  billing: "invoice" | "prepaid";
}

export interface SoakWorld {
  operatorKey: string;
  operator: Client;
  clusters: SimCluster[];
  tenants: SoakTenant[];
  gpuTypes: string[];
  gpus: number;
}

const GPU_TYPES = ["H100", "A100"];
const RATES: Record<string, number> = { H100: 300, A100: 180 };
/** Shares of the fleet each tenant may hold: together well under the fleet, so waiting is for quota, not capacity. */
const TENANTS: Array<{ name: string; share: number; billing: SoakTenant["billing"] }> = [
  { name: "soak-alpha", share: 0.22, billing: "invoice" },
  { name: "soak-beta", share: 0.18, billing: "invoice" },
  { name: "soak-gamma", share: 0.12, billing: "invoice" },
  { name: "soak-delta", share: 0.1, billing: "prepaid" },
  { name: "soak-epsilon", share: 0.08, billing: "invoice" },
];
/** a tenant that always wants more than it may have: its work waits for quota all run long */
const TIGHT_TENANT = { name: "soak-tight", quota: 16 };
const PREPAID_DEPOSIT_CENTS = 100_000_000;
/** The handovers' time limits: well past a simulated wipe and a few heartbeats, short enough that a stuck step shows within a run. */
const SOAK_HANDOVER = { wipe_timeout_s: 300, attestation_timeout_s: 300 };

/** Racks of up to ten nodes, pods of up to ten racks: `perCluster` nodes or the next layout above it. */
function layoutFor(perCluster: number): { pods: number; racksPerPod: number; nodesPerRack: number } {
  const nodesPerRack = Math.min(10, Math.max(1, perCluster));
  const racks = Math.ceil(perCluster / nodesPerRack);
  const pods = Math.ceil(racks / 10);
  return { pods, racksPerPod: Math.ceil(racks / pods), nodesPerRack };
}

export async function seedSoakWorld(opts: {
  appUrls: string[];
  nodes: number;
  alertWindows: { unreachableS: number; temperatureS: number; temperatureOccurrences: number };
}): Promise<SoakWorld> {
  const { key: operatorKey } = await createApiKey(systemActor, { name: "soak operator", scope: "operator" });
  // the soak process keeps no connection of its own through the database restart
  await disconnectDb();
  const operator = createClient({ baseUrl: opts.appUrls, key: operatorKey, retryForMs: 30_000 });

  const log = parseEventLog(bootEventLog());
  const { policy } = await operator.call<{ policy: { id: string } }>("POST", "/api/attestation/policies", {
    name: "soak-firmware-baseline",
    description: "The simulated firmware's clean boot",
    ...referencePolicyFromLog(log, replay(log), {
      require: ["event_log", "wipe_report", "gpu_reports"],
      gpu: { driver_versions: [SIM_DRIVER_VERSION], vbios_versions: [SIM_VBIOS_VERSION] },
    }),
  });

  const layout = layoutFor(Math.ceil(opts.nodes / GPU_TYPES.length));
  const clusters: SimCluster[] = [];
  for (const gpuType of GPU_TYPES) {
    const { cluster } = await operator.call<{ cluster: { id: string } }>("POST", "/api/clusters", {
      name: `soak-${gpuType.toLowerCase()}`,
      region: "soak-1",
    });
    const { key } = await operator.call<{ key: string }>("POST", "/api/api-keys", {
      name: `soak agents ${gpuType}`,
      scope: "agent",
      cluster_id: cluster.id,
    });
    await operator.call("PUT", `/api/clusters/${cluster.id}/handover`, {
      wipe_command: "/usr/local/sbin/gpuforge-wipe --disks nvme0n1,nvme1n1",
      attestation: "required",
      attestation_policy_id: policy.id,
      ...SOAK_HANDOVER,
    });
    clusters.push({ clusterId: cluster.id, key, gpuType, ...gpuProfile(gpuType), ...layout });
    await operator.call("PUT", `/api/billing/rates/${gpuType}`, { cents_per_hour: RATES[gpuType] });
  }
  const gpus = clusters.reduce((n, c) => n + c.pods * c.racksPerPod * c.nodesPerRack * 8, 0);

  const tenants: SoakTenant[] = [];
  const specs = [
    ...TENANTS.map((t) => ({ name: t.name, quota: Math.max(16, Math.floor(gpus * t.share)), billing: t.billing })),
    { ...TIGHT_TENANT, billing: "invoice" as const },
  ];
  for (const spec of specs) {
    const { tenant } = await operator.call<{ tenant: { id: string } }>("POST", "/api/tenants", {
      name: spec.name,
      gpu_quota: spec.quota,
      billing_mode: spec.billing,
    });
    const { key } = await operator.call<{ key: string }>("POST", "/api/api-keys", {
      name: `${spec.name} workload`,
      scope: "tenant",
      tenant_id: tenant.id,
    });
    if (spec.billing === "prepaid")
      await operator.call("POST", `/api/tenants/${tenant.id}/deposits`, { amount_cents: PREPAID_DEPOSIT_CENTS, description: "soak float" });
    tenants.push({ id: tenant.id, name: spec.name, key, quota: spec.quota, billing: spec.billing });
  }

  // the default alert windows suit a fleet watched for days; the soak's faults last about a minute
  const { data: rules } = await operator.call<{ data: Array<{ id: string; rule_type: string }> }>("GET", "/api/alerts/rules");
  for (const r of rules) {
    if (r.rule_type === "node_unreachable")
      await operator.call("PATCH", `/api/alerts/rules/${r.id}`, { window_s: opts.alertWindows.unreachableS });
    if (r.rule_type === "gpu_temperature")
      await operator.call("PATCH", `/api/alerts/rules/${r.id}`, {
        window_s: opts.alertWindows.temperatureS,
        occurrences: opts.alertWindows.temperatureOccurrences,
      });
  }
  return { operatorKey, operator, clusters, tenants, gpuTypes: GPU_TYPES, gpus };
}
