import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { forbidden } from "@/lib/errors";
import { toCsv } from "@/lib/http/csv";
import { contains, dayRange, EXPORT_LIMIT, pageWindow } from "@/lib/http/list-params";
import { isUuid } from "@/lib/ids";
import type { Prisma } from "@/lib/generated/prisma/client";
import { aboutTenant } from "./operator-voice";
import { JOB_SORT_ORDERS, type JobListParams } from "./schemas";

/** The console's job lists (the operator queue, a tenant's jobs) and their CSV export. */

function statusWhere(status: JobListParams["status"]): Prisma.JobWhereInput {
  if (!status) return {};
  if (status === "waiting") return { status: { in: ["queued", "blocked"] } };
  if (status === "active") return { status: { in: ["queued", "blocked", "running"] } };
  return { status };
}

function where(p: Principal, q: JobListParams): Prisma.JobWhereInput {
  if (p.kind === "agent") throw forbidden("Agents see the jobs assigned to them through heartbeats");
  const tenantId = p.kind === "tenant" ? p.tenantId : q.tenant_id;
  const uuid = isUuid(q.q);
  return {
    ...(tenantId ? { tenantId } : {}),
    ...statusWhere(q.status),
    ...(q.gpu_type ? { gpuType: q.gpu_type } : {}),
    ...(q.q ? { OR: [{ name: contains(q.q) }, ...(uuid ? [{ id: q.q }] : [])] } : {}),
    ...(dayRange(q.from, q.to) ? { submittedAt: dayRange(q.from, q.to) } : {}),
  };
}

const listSelect = {
  id: true,
  name: true,
  status: true,
  gpuCount: true,
  gpuType: true,
  priority: true,
  pendingReason: true,
  submittedAt: true,
  startedAt: true,
  finishedAt: true,
  submittedBy: true,
  tenantId: true,
  image: true,
  command: true,
  tenant: { select: { name: true } },
  submitter: { select: { name: true, email: true } },
  gpus: { select: { node: { select: { id: true, hostname: true } } } },
} satisfies Prisma.JobSelect;

/** One page of jobs matching the filters, and how many match in all. */
export async function listJobsPage(p: Principal, q: JobListParams) {
  const w = where(p, q);
  const [rows, total] = await Promise.all([
    db().job.findMany({ where: w, orderBy: JOB_SORT_ORDERS[q.sort], ...pageWindow(q), select: listSelect }),
    db().job.count({ where: w }),
  ]);
  // operators read every tenant's waiting reasons: about the tenant, not to it
  const voiced = p.kind === "operator" ? rows.map((r) => ({ ...r, pendingReason: aboutTenant(r.pendingReason, r.tenant.name) })) : rows;
  return { rows: voiced.map(withNodes), total };
}

function withNodes<T extends { gpus: Array<{ node: { id: string; hostname: string } }> }>(j: T) {
  const nodes = new Map(j.gpus.map((g) => [g.node.id, g.node.hostname]));
  return { ...j, nodes: [...nodes.entries()].map(([id, hostname]) => ({ id, hostname })) };
}

/** Every job matching the filters (up to EXPORT_LIMIT), as CSV. */
export async function jobsCsv(p: Principal, q: JobListParams): Promise<string> {
  const rows = (
    await db().job.findMany({ where: where(p, q), orderBy: JOB_SORT_ORDERS[q.sort], take: EXPORT_LIMIT, select: listSelect })
  ).map(withNodes);
  return toCsv(
    [
      "id",
      "name",
      "tenant",
      "status",
      "gpu_count",
      "gpu_type",
      "priority",
      "nodes",
      "submitted_by",
      "submitted_at",
      "started_at",
      "finished_at",
      "image",
      "command",
      "pending_reason",
    ],
    rows.map((j) => [
      j.id,
      j.name,
      j.tenant.name,
      j.status,
      j.gpuCount,
      j.gpuType,
      j.priority,
      j.nodes.map((n) => n.hostname).join(" "),
      j.submitter?.email ?? "",
      j.submittedAt.toISOString(),
      j.startedAt?.toISOString() ?? "",
      j.finishedAt?.toISOString() ?? "",
      j.image ?? "",
      j.command ?? "",
      j.status === "queued" || j.status === "blocked" ? (j.pendingReason ?? "") : "",
    ]),
  );
}
