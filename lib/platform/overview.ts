import "server-only";
import type { OperatorPrincipal, TenantPrincipal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { describeEntries } from "@/lib/audit/list-audit";
import { tenantMonthSpend } from "@/lib/billing/month-spend";
import { tenantFigures } from "@/lib/tenants/queries";

/** Figures for the operator's home page, in one round trip per table. */
export async function operatorOverview(_p: OperatorPrincipal) {
  const [tenants, users, clusters, keys, recent] = await Promise.all([
    db().tenant.groupBy({ by: ["status"], _count: { _all: true }, _sum: { gpuQuota: true } }),
    db().user.count({ where: { disabledAt: null } }),
    db().cluster.count(),
    db().apiKey.groupBy({ by: ["scope"], where: { revokedAt: null }, _count: { _all: true } }),
    db().auditLog.findMany({ orderBy: { id: "desc" }, take: 8 }),
  ]);
  const active = tenants.find((t) => t.status === "active");
  const suspended = tenants.find((t) => t.status === "suspended");
  return {
    tenantsActive: active?._count._all ?? 0,
    tenantsSuspended: suspended?._count._all ?? 0,
    quotaGranted: active?._sum.gpuQuota ?? 0,
    users,
    clusters,
    keysByScope: Object.fromEntries(keys.map((k) => [k.scope, k._count._all])) as Record<string, number>,
    recent: await describeEntries(recent),
  };
}

/** A tenant's home page: its account, what its work is doing now (jobs and endpoints), this month's money and what it owes. */
export async function tenantOverview(p: TenantPrincipal) {
  const [tenant, users, keys, recent, jobs, endpoints, figures, month, due] = await Promise.all([
    db().tenant.findUniqueOrThrow({ where: { id: p.tenantId } }),
    db().user.count({ where: { tenantId: p.tenantId, disabledAt: null } }),
    db().apiKey.count({ where: { tenantId: p.tenantId, revokedAt: null } }),
    db().auditLog.findMany({ where: { tenantId: p.tenantId }, orderBy: { id: "desc" }, take: 8 }),
    db().job.groupBy({
      by: ["status"],
      where: { tenantId: p.tenantId, status: { in: ["queued", "blocked", "running"] } },
      _count: { _all: true },
    }),
    db().endpoint.groupBy({ by: ["status"], where: { tenantId: p.tenantId, deletedAt: null }, _count: { _all: true } }),
    tenantFigures(p.tenantId),
    tenantMonthSpend(p.tenantId),
    db().invoice.aggregate({ where: { tenantId: p.tenantId, status: "pending" }, _sum: { amountCents: true }, _count: { _all: true } }),
  ]);
  const count = <T extends { status: string; _count: { _all: number } }>(rows: T[], ...statuses: string[]) =>
    rows.filter((r) => statuses.includes(r.status)).reduce((n, r) => n + r._count._all, 0);
  return {
    tenant,
    users,
    keys,
    recent: await describeEntries(recent),
    figures,
    month,
    due: { cents: Number(due._sum.amountCents ?? 0), invoices: due._count._all },
    jobsRunning: count(jobs, "running"),
    jobsWaiting: count(jobs, "queued", "blocked"),
    endpointsServing: count(endpoints, "ready", "scaling"),
    endpointsAttention: count(endpoints, "degraded", "failed"),
    endpointsTotal: count(endpoints, "provisioning", "ready", "scaling", "degraded", "failed", "stopped"),
  };
}

export async function tenantName(tenantId: string): Promise<string> {
  const t = await db().tenant.findUnique({ where: { id: tenantId }, select: { name: true } });
  return t?.name ?? "Unknown tenant";
}

export async function userSummary(userId: string | undefined) {
  if (!userId) return { name: "API", email: "" };
  const u = await db().user.findUnique({ where: { id: userId }, select: { name: true, email: true } });
  return u ?? { name: "Unknown", email: "" };
}

/** "prepaid" or "invoice": whether the tenant plane watches a balance. */
export async function tenantBillingMode(tenantId: string) {
  return (await db().tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { billingMode: true } })).billingMode;
}
