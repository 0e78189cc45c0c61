import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db, pool } from "@/lib/db/client";
import { env } from "@/lib/env";
import type { JobAssignment } from "@/lib/fleet/assignments";
import { forbidden, notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { tenantFigures } from "@/lib/tenants/queries";
import { jobReportToken } from "./job-token";
import { jobSelect } from "./schemas";

/** Jobs a caller may see: a tenant its own, an operator all, an agent those on its cluster's nodes. */
function scopeWhere(p: Principal) {
  if (p.kind === "agent") return { gpus: { some: { node: { clusterId: p.clusterId, ...(p.nodeId ? { id: p.nodeId } : {}) } } } };
  return tenantScope(p);
}

export async function getJobOrThrow(p: Principal, id: string) {
  const job = await db().job.findFirst({ where: { id, ...scopeWhere(p) }, select: jobSelect });
  if (!job) throw notFound("Job");
  return p.kind === "tenant" ? (await redactPendingReasons(p.tenantId, [job]))[0]! : job;
}

const JOB_REFERENCE = /\bjob ([0-9a-f]{8})\b/g;

/**
 * The scheduler explains a wait with the job ahead ("waiting behind job 1a2b3c4d"). A tenant may
 * read that about its own jobs only: a reference to another tenant's job becomes "another
 * organisation's job", so the queue does not leak who else is waiting. Operators see it all.
 */
export async function redactPendingReasons<T extends { pendingReason: string | null }>(tenantId: string, rows: T[]): Promise<T[]> {
  const prefixes = [...new Set(rows.flatMap((r) => [...(r.pendingReason ?? "").matchAll(JOB_REFERENCE)].map((m) => m[1]!)))];
  if (prefixes.length === 0) return rows;
  // each prefix is a range of the primary key: one index probe per prefix
  const { rows: own } = await pool().query<{ p: string }>(
    `SELECT p FROM unnest($2::text[]) p
      WHERE EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = $1 AND j.id BETWEEN (p || '-0000-0000-0000-000000000000')::uuid AND (p || '-ffff-ffff-ffff-ffffffffffff')::uuid)`,
    [tenantId, prefixes],
  );
  const mine = new Set(own.map((r) => r.p));
  return rows.map((r) =>
    r.pendingReason
      ? {
          ...r,
          pendingReason: r.pendingReason.replace(JOB_REFERENCE, (all, prefix: string) =>
            mine.has(prefix) ? all : "another organisation's job",
          ),
        }
      : r,
  );
}

export async function listJobs(p: Principal, opts: { limit: number; cursor?: string; status?: string; tenant_id?: string }) {
  if (p.kind === "agent") throw forbidden("Agents see the jobs assigned to them through heartbeats");
  const tenantId = p.kind === "tenant" ? p.tenantId : opts.tenant_id;
  const rows = await db().job.findMany({
    where: {
      ...(tenantId ? { tenantId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...afterCursor(decodeCursor(opts.cursor), "submittedAt"),
    },
    orderBy: [{ submittedAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: jobSelect,
  });
  return page(p.kind === "tenant" ? await redactPendingReasons(p.tenantId, rows) : rows, opts.limit, (j) => j.submittedAt);
}

/** Where each attempt of a job ran and when, newest first (its logs and GPU telemetry are per attempt). */
export async function listJobPlacements(p: Principal, jobId: string) {
  await getJobOrThrow(p, jobId);
  const rows = await db().jobPlacement.findMany({
    where: { jobId },
    orderBy: { attempt: "desc" },
    select: { attempt: true, nodeIds: true, startedAt: true, endedAt: true, endStatus: true, reservationId: true },
  });
  const nodes = await db().node.findMany({
    where: { id: { in: [...new Set(rows.flatMap((r) => r.nodeIds))] } },
    select: { id: true, hostname: true, clusterId: true, pod: true, rack: true },
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return rows.map((r) => ({
    ...r,
    hostnames: r.nodeIds.map((id) => byId.get(id)?.hostname ?? id.slice(0, 8)),
    // where the attempt ran, as the interconnect groups it (pod, rack)
    nodes: r.nodeIds.flatMap((id) => {
      const n = byId.get(id);
      return n ? [{ node_id: n.id, hostname: n.hostname, clusterId: n.clusterId, pod: n.pod, rack: n.rack }] : [];
    }),
  }));
}

export async function listJobEvents(p: Principal, jobId: string) {
  await getJobOrThrow(p, jobId);
  return db().jobEvent.findMany({ where: { jobId }, orderBy: { id: "asc" } });
}

/**
 * What a node must be running now: running jobs holding GPUs on it, with the GPUs each holds there,
 * the placement (attempt, fence) its reports must name, and the token its container posts outputs with. A job with a command and no image
 * (submitted before images were required) runs in the operator's default image, or not at all.
 */
export async function assignmentsForNode(nodeId: string): Promise<JobAssignment[]> {
  const { rows } = await pool().query<{
    job_id: string;
    gpu_ids: string[];
    image: string | null;
    command: string | null;
    duration_s: number | null;
    attempt: number;
    fence: string;
    env: Record<string, string>;
  }>(
    `SELECT j.id AS job_id, array_agg(g.id ORDER BY g.index) AS gpu_ids, j.image, j.command, j.duration_s, j.attempts AS attempt, j.fence::text AS fence, j.env
       FROM gpus g JOIN jobs j ON j.id = g.allocated_job_id
      WHERE g.node_id = $1 AND j.status = 'running' GROUP BY j.id`,
    [nodeId],
  );
  return rows.map((r) => {
    const image = r.image ?? (r.command ? env().DEFAULT_JOB_IMAGE : undefined);
    return {
      kind: "job" as const,
      job_id: r.job_id,
      attempt: r.attempt,
      fence: r.fence,
      gpu_ids: r.gpu_ids,
      logs_path: `/api/jobs/${r.job_id}/logs`,
      outputs_path: `/api/jobs/${r.job_id}/outputs`,
      report_token: jobReportToken(r.job_id, r.attempt, r.fence),
      ...(Object.keys(r.env ?? {}).length ? { env: r.env } : {}),
      ...(image ? { image } : {}),
      ...(r.command ? { command: r.command } : {}),
      ...(r.duration_s ? { duration_s: r.duration_s } : {}),
    };
  });
}

export async function listSchedulerLogs(limit: number) {
  const rows = await db().schedulerLog.findMany({ orderBy: { id: "desc" }, take: limit });
  return rows.map((r) => ({
    id: r.id.toString(),
    trigger: r.trigger,
    considered: r.considered,
    placed: r.placed,
    blocked: r.blocked,
    duration_ms: r.durationMs,
    decisions: r.decisions,
    created_at: r.createdAt.toISOString(),
  }));
}

/** GPU types present in the fleet, for the submit form. */
export async function fleetGpuTypes(): Promise<string[]> {
  const rows = await db().gpu.findMany({
    where: { status: { not: "missing" } },
    distinct: ["gpuType"],
    select: { gpuType: true },
    orderBy: { gpuType: "asc" },
  });
  return rows.map((r) => r.gpuType);
}

export async function jobCounts(tenantId?: string) {
  const rows = await db().job.groupBy({
    by: ["status"],
    where: { status: { in: ["queued", "running", "blocked"] }, ...(tenantId ? { tenantId } : {}) },
    _count: { _all: true },
  });
  const n = (s: string) => rows.find((r) => r.status === s)?._count._all ?? 0;
  return { queued: n("queued"), running: n("running"), blocked: n("blocked") };
}

/** GPUs of each type in the fleet (missing ones not counted): what a job or endpoint can ever get. */
export async function fleetCapacity(): Promise<Record<string, number>> {
  const rows = await db().gpu.groupBy({ by: ["gpuType"], where: { status: { not: "missing" } }, _count: { _all: true } });
  return Object.fromEntries(rows.map((r) => [r.gpuType, r._count._all]));
}

/** What the submit form needs to say whether a job fits: the tenant's quota, what it holds, the fleet by type. */
export async function jobFitContext(tenantId: string) {
  const [tenant, figures, capacity] = await Promise.all([
    db().tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { gpuQuota: true } }),
    tenantFigures(tenantId),
    fleetCapacity(),
  ]);
  return { quota: tenant.gpuQuota, inUse: figures.gpu_in_use, figures, capacity };
}

/** Where a job holds GPUs now: each node with the indexes of its GPUs there. */
export async function jobPlacement(jobId: string) {
  const gpus = await db().gpu.findMany({
    where: { allocatedJobId: jobId },
    select: { index: true, node: { select: { id: true, hostname: true } } },
    orderBy: [{ nodeId: "asc" }, { index: "asc" }],
  });
  const nodes = new Map<string, { id: string; hostname: string; gpuIndexes: number[] }>();
  for (const g of gpus) {
    const n = nodes.get(g.node.id) ?? { id: g.node.id, hostname: g.node.hostname, gpuIndexes: [] };
    n.gpuIndexes.push(g.index);
    nodes.set(g.node.id, n);
  }
  return [...nodes.values()];
}

/** Who submitted a job from the console, when a person did. */
export async function jobSubmitter(userId: string | null | undefined) {
  if (!userId) return null;
  return db().user.findUnique({ where: { id: userId }, select: { name: true, email: true } });
}
