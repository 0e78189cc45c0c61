import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db, pool } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { run } from "@/lib/db/statement";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { redactPendingReasons } from "@/lib/jobs/queries";
import { gatewayUrl } from "@/lib/platform/public-url";
import { oneOf } from "@/lib/vocabulary";
import { HOLDING_STATUSES, POD_STATUSES } from "./pod-lifecycle";
import type { PodJson } from "./schemas";
import { podContainerPorts, sshKeyFingerprint } from "./ssh-key";
import { POD_LIVE_FACTS, POD_PLACEMENTS } from "./statements";

/** Pods a caller may see: a tenant its own, an operator every one. Agents see theirs through heartbeats. */
const scopeWhere = (p: Principal) => tenantScope(p, "Agents see the pods assigned to them through heartbeats");

const podSelect = {
  id: true,
  tenantId: true,
  name: true,
  status: true,
  statusReason: true,
  pendingReason: true,
  gpuType: true,
  gpuCount: true,
  clusterId: true,
  image: true,
  ports: true,
  sshPublicKey: true,
  restartOnFailure: true,
  attempts: true,
  nodeId: true,
  createdAt: true,
  updatedAt: true,
  terminatedAt: true,
} as const;

type PodRow = Awaited<ReturnType<typeof findPods>>[number];

function findPods(where: object, opts: { take?: number; orderBy?: object[] } = {}) {
  return db().pod.findMany({ where, select: podSelect, ...opts });
}

interface Live {
  host: string | null;
  hostname: string | null;
  gpu_ids: string[];
  ports: Array<{ container_port: number; host_port: number }>;
  running_at: Date | null;
  cost_cents: number;
}

/**
 * Where each pod runs now and what it has cost: its open placement (node, GPUs, published ports,
 * since when its container runs) and every billed segment plus the running one not billed yet.
 */
async function liveFacts(ids: string[]): Promise<Map<string, Live>> {
  if (ids.length === 0) return new Map();
  const rows = await run(pool(), POD_LIVE_FACTS, [ids]);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        host: r.host,
        hostname: r.hostname,
        gpu_ids: r.gpu_ids ?? [],
        ports: (r.ports as Live["ports"] | null) ?? [],
        running_at: r.running_at,
        cost_cents: Number(r.cost),
      },
    ]),
  );
}

/**
 * The SSH command a tenant copies: root on the node's address, at the host port published for 22,
 * with a local forward for each of the pod's other ports (nothing on the node's network reaches
 * those but the inference gateway; a tunnel is how a browser opens a notebook).
 */
export function sshCommand(
  host: string | null,
  ports: Array<{ container_port: number; host_port: number | null; access?: "ssh" | "gateway" }>,
): string | null {
  const ssh = ports.find((p) => p.container_port === 22 && p.access !== "gateway")?.host_port;
  if (!host || !ssh) return null;
  const forwards = ports.filter((p) => p.access === "gateway").map((p) => ` -L ${p.container_port}:localhost:${p.container_port}`);
  return `ssh root@${host.includes(":") ? `[${host}]` : host} -p ${ssh}${forwards.join("")}`;
}

function podJson(row: PodRow, live: Live | undefined): PodJson {
  const status = oneOf(POD_STATUSES, row.status, "pods.status");
  const running = row.status === "running" && live?.running_at;
  const published = new Map((running ? live.ports : []).map((p) => [p.container_port, p.host_port]));
  const hasKey = row.sshPublicKey !== null;
  const ports = podContainerPorts(row.ports, hasKey).map((container_port) => {
    const access = container_port === 22 && hasKey ? ("ssh" as const) : ("gateway" as const);
    return {
      container_port,
      host_port: published.get(container_port) ?? null,
      access,
      url: access === "gateway" && running ? gatewayUrl(`/v1/pods/${row.id}/ports/${container_port}/`) : null,
    };
  });
  const host = running ? live.host : null;
  return {
    id: row.id,
    tenant_id: row.tenantId,
    name: row.name,
    status,
    status_reason: row.statusReason,
    pending_reason: row.status === "pending" ? row.pendingReason : null,
    gpu_type: row.gpuType,
    gpu_count: row.gpuCount,
    cluster_id: row.clusterId,
    image: row.image,
    restart_on_failure: row.restartOnFailure,
    ssh_key_fingerprint: row.sshPublicKey ? sshKeyFingerprint(row.sshPublicKey) : null,
    attempt: row.attempts,
    host,
    hostname: HOLDING_STATUSES.includes(status) ? (live?.hostname ?? null) : null,
    gpu_ids: live?.gpu_ids ?? [],
    ports,
    ssh_command: running ? sshCommand(host, ports) : null,
    running_since: running ? live.running_at!.toISOString() : null,
    cost_cents: live?.cost_cents ?? 0,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    terminated_at: row.terminatedAt?.toISOString() ?? null,
  };
}

async function present(p: Principal, rows: PodRow[]): Promise<PodJson[]> {
  const shown = p.kind === "tenant" ? await redactPendingReasons(p.tenantId, rows) : rows;
  const live = await liveFacts(shown.map((r) => r.id));
  return shown.map((r) => podJson(r, live.get(r.id)));
}

export async function getPodOrThrow(p: Principal, id: string): Promise<PodJson> {
  const rows = await findPods({ id, ...scopeWhere(p) });
  if (!rows[0]) throw notFound("Pod");
  return (await present(p, rows))[0]!;
}

export async function listPods(p: Principal, opts: { limit: number; cursor?: string; status?: string; tenant_id?: string }) {
  const tenantId = p.kind === "tenant" ? p.tenantId : opts.tenant_id;
  const rows = await findPods(
    {
      ...scopeWhere(p),
      ...(tenantId ? { tenantId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    { orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: opts.limit + 1 },
  );
  const { data, nextCursor } = page(rows, opts.limit);
  return { data: await present(p, data), nextCursor };
}

/** Every transition of a pod, newest first. */
export async function listPodEvents(p: Principal, id: string) {
  await getPodOrThrow(p, id);
  const rows = await db().podEvent.findMany({ where: { podId: id }, orderBy: { id: "desc" }, take: 500 });
  return rows.map((e) => ({
    from_status: e.fromStatus,
    to_status: e.toStatus,
    reason: e.reason,
    actor: e.actor,
    created_at: e.createdAt.toISOString(),
  }));
}

/** Where each placement of a pod ran and when, newest first (its logs and GPU telemetry are per placement). */
export async function listPodPlacements(p: Principal, id: string) {
  await getPodOrThrow(p, id);
  const rows = await run(pool(), POD_PLACEMENTS, [id]);
  return rows;
}
