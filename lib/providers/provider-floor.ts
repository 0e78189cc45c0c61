import "server-only";
import { db } from "@/lib/db/client";
import { oneOf } from "@/lib/vocabulary";
import { PROVIDERS, type ProviderName } from "./vocabulary";

export interface ProviderFloorNode {
  instanceId: string;
  provider: ProviderName;
  region: string;
  cluster: string;
  clusterId: string;
  nodeId: string | null;
  hostname: string | null;
  status: string;
  gpuType: string;
  gpuCount: number;
  jobId: string | null;
  costCentsPerHour: number;
  priceCentsPerHour: number;
}

/** The live rented nodes, by provider cluster (the fleet floor's provider part). */
export async function providerFloor(): Promise<ProviderFloorNode[]> {
  const rows = await db().providerInstance.findMany({
    where: { status: { in: ["launching", "booting", "running", "terminating"] } },
    orderBy: [{ provider: "asc" }, { region: "asc" }, { createdAt: "asc" }],
    take: 500,
  });
  const clusters = new Map(
    (
      await db().cluster.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.clusterId))] } }, select: { id: true, name: true } })
    ).map((c) => [c.id, c.name]),
  );
  const nodes = new Map(
    (
      await db().node.findMany({
        where: { id: { in: rows.flatMap((r) => (r.nodeId ? [r.nodeId] : [])) } },
        select: { id: true, hostname: true },
      })
    ).map((n) => [n.id, n.hostname]),
  );
  return rows.map((r) => ({
    instanceId: r.id,
    provider: oneOf(PROVIDERS, r.provider, "provider_instances.provider"),
    region: r.region,
    cluster: clusters.get(r.clusterId) ?? r.clusterId,
    clusterId: r.clusterId,
    nodeId: r.nodeId,
    hostname: r.nodeId ? (nodes.get(r.nodeId) ?? null) : null,
    status: r.status,
    gpuType: r.gpuType,
    gpuCount: r.gpuCount,
    jobId: r.jobId,
    costCentsPerHour: r.costCentsPerGpuHour * r.gpuCount,
    priceCentsPerHour: r.priceCentsPerGpuHour * r.gpuCount,
  }));
}
