import "server-only";
import type { OperatorPrincipal } from "@/lib/auth/principal";
import { tenantMonthSpend } from "@/lib/billing/month-spend";
import { invoiceJson } from "@/lib/billing/invoice-json";
import { listInvoices } from "@/lib/billing/list-invoices";
import { db } from "@/lib/db/client";
import { listJobsPage } from "@/lib/jobs/list-jobs";
import { jobCounts } from "@/lib/jobs/queries";
import { jobListParams } from "@/lib/jobs/schemas";
import { tenantFigures } from "./queries";

/**
 * What an operator sees of one tenant at a glance (issue 32: the page had settings only): its GPUs
 * in use against the quota (the same figures the tenant sees), this month's money in its two parts,
 * what it owes, what runs now, and its invoices.
 */
export async function operatorTenantOverview(p: OperatorPrincipal, tenantId: string) {
  const [figures, month, invoices, running, counts, endpoints, pods, outstanding] = await Promise.all([
    tenantFigures(tenantId),
    tenantMonthSpend(tenantId),
    listInvoices(p, { tenantId, limit: 8 }),
    listJobsPage(p, jobListParams.parse({ tenant_id: tenantId, status: "running", sort: "newest", per_page: 25 })).then((r) => ({
      ...r,
      rows: r.rows.slice(0, 8),
    })),
    jobCounts(tenantId),
    db().endpoint.count({ where: { tenantId, deletedAt: null, status: { in: ["ready", "scaling", "degraded"] } } }),
    db().pod.count({ where: { tenantId, status: { in: ["starting", "running"] } } }),
    db().invoice.aggregate({ where: { tenantId, status: "pending" }, _sum: { amountCents: true }, _count: { _all: true } }),
  ]);
  return {
    figures,
    month,
    invoices: invoices.data.map(invoiceJson),
    moreInvoices: invoices.nextCursor !== null,
    running: running.rows.map((j) => ({
      id: j.id,
      name: j.name,
      gpuCount: j.gpuCount,
      gpuType: j.gpuType,
      startedAt: j.startedAt?.toISOString() ?? null,
      nodes: j.nodes.map((n) => n.hostname),
    })),
    runningTotal: running.total,
    counts: { ...counts, endpoints, pods },
    outstanding: { cents: Number(outstanding._sum.amountCents ?? 0), invoices: outstanding._count._all },
  };
}
