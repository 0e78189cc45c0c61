import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { tenantMonthSpend } from "@/lib/billing/month-spend";
import { tenantJson, tenantSelect } from "./schemas";
import { TENANT_FIGURES } from "./statements";

/** A tenant the caller may see; another tenant's id answers 404 so existence is not leaked. */
export async function getTenantOrThrow(principal: Principal, id: string) {
  const scope = tenantScope(principal);
  if (scope.tenantId && scope.tenantId !== id) throw notFound("Tenant");
  const tenant = await db().tenant.findUnique({ where: { id }, select: tenantSelect });
  if (!tenant) throw notFound("Tenant");
  return tenant;
}

export async function listTenants(
  principal: Principal,
  opts: { limit: number; cursor?: string; status?: "active" | "suspended"; origin?: "operator" | "signup" },
) {
  const scope = tenantScope(principal);
  const rows = await db().tenant.findMany({
    where: {
      ...(scope.tenantId ? { id: scope.tenantId } : {}),
      ...(opts.status ? { status: opts.status } : {}),
      ...(opts.origin ? { origin: opts.origin } : {}),
      ...afterCursor(decodeCursor(opts.cursor)),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: opts.limit + 1,
    select: tenantSelect,
  });
  return page(rows, opts.limit);
}

/** Tenant overview for the admin plane: every tenant with its user and key counts. */
export async function listTenantsWithCounts() {
  return db().tenant.findMany({
    orderBy: { name: "asc" },
    select: {
      ...tenantSelect,
      _count: { select: { users: { where: { disabledAt: null } }, apiKeys: { where: { revokedAt: null } } } },
      users: { where: { role: "tenant_admin" }, orderBy: { createdAt: "asc" }, take: 1, select: { email: true, emailVerifiedAt: true } },
    },
  });
}

/** What holds a tenant's GPUs now: the total its quota counts, and by holder (they add up to it). */
export interface GpusInUse {
  total: number;
  jobs: number;
  endpoint_replicas: number;
  pods: number;
  /** the GPUs of the nodes its active reservations hold, whatever runs inside them */
  reserved: number;
}

/**
 * What GET /api/tenants/{id} adds to a tenant, and what every page's "GPUs in use" shows: the GPUs
 * it holds now, everything that holds one (TENANT_FIGURES), with the split; and the prepaid
 * balance (the ledger's sum).
 */
export async function tenantFigures(
  id: string,
): Promise<{ gpu_in_use: number; gpu_in_use_by: Omit<GpusInUse, "total">; balance_cents: number }> {
  const [r] = await run(db(), TENANT_FIGURES, [id, id]);
  return {
    gpu_in_use: r!.in_use,
    gpu_in_use_by: { jobs: r!.jobs, endpoint_replicas: r!.replicas, pods: r!.pods, reserved: r!.reserved },
    balance_cents: Number(r!.balance),
  };
}

/** GET /api/tenants/{id}: the tenant, its GPUs in use (split), balance, and this month's money (month-spend.ts). */
export async function tenantDetail(principal: Principal, id: string) {
  const tenant = await getTenantOrThrow(principal, id);
  const [figures, month] = await Promise.all([tenantFigures(id), tenantMonthSpend(id)]);
  return {
    ...tenantJson(tenant),
    ...figures,
    month: { billed_cents: month.billed_cents, accruing_cents: month.accruing_cents, total_cents: month.total_cents },
  };
}
