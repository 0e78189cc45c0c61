import Link from "next/link";
import { AuditList, toAuditViews } from "@/components/shell/audit-list";
import { MonthSpendCard } from "@/components/billing/month-spend";
import { GpusInUseStat } from "@/components/workloads/gpus-in-use";
import { Badge } from "@/components/ui/badge";
import { ButtonLink } from "@/components/ui/button";
import { formatCents } from "@/lib/billing/money";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { tenantOverview } from "@/lib/platform/overview";
import { tenantAdmins } from "@/lib/users/queries";
import { ROLE_SUMMARIES } from "@/lib/users/roles";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Dashboard" };

export default page({ plane: "tenant", path: "/dashboard", loading: <PageSkeleton /> }, async ({ principal: p }) => {
  const [o, admins] = await Promise.all([tenantOverview(p), tenantAdmins(p.tenantId)]);
  return (
    <>
      <PageHeader
        title={o.tenant.name}
        description="Your organisation's space on the GPU fleet."
        actions={
          <div className="flex flex-wrap items-center gap-3">
            <Badge tone={o.tenant.status === "active" ? "green" : "amber"}>{o.tenant.status}</Badge>
            {o.tenant.status === "active" ? (
              <>
                <ButtonLink href="/dashboard/jobs#submit-job">Submit job</ButtonLink>
                <ButtonLink href="/dashboard/endpoints#create-endpoint" variant="secondary">
                  Deploy endpoint
                </ButtonLink>
              </>
            ) : null}
          </div>
        }
      />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <GpusInUseStat figures={o.figures} quota={o.tenant.gpuQuota} />
        <Link
          href="/dashboard/jobs"
          className="block rounded-lg transition hover:shadow-md focus-visible:outline-2 focus-visible:outline-indigo-600"
        >
          <Stat label="Jobs" value={`${o.jobsRunning} running`} hint={`${o.jobsWaiting} waiting · open the queue`} />
        </Link>
        <Link
          href="/dashboard/endpoints"
          className="block rounded-lg transition hover:shadow-md focus-visible:outline-2 focus-visible:outline-indigo-600"
        >
          <Stat
            label="Inference endpoints"
            value={`${o.endpointsServing} serving`}
            hint={`${o.endpointsTotal} in all${o.endpointsAttention ? ` · ${o.endpointsAttention} need attention` : ""}`}
          />
        </Link>
        <Link
          href="/dashboard/billing"
          className="block rounded-lg transition hover:shadow-md focus-visible:outline-2 focus-visible:outline-indigo-600"
          data-testid="amount-due"
        >
          {o.tenant.billingMode === "prepaid" && o.due.invoices === 0 ? (
            <Stat label="Prepaid balance" value={formatCents(o.figures.balance_cents)} hint="Work is charged to it as it runs · billing" />
          ) : (
            <Stat
              label="Amount due"
              value={formatCents(o.due.cents)}
              hint={
                o.due.invoices
                  ? `${o.due.invoices} pending invoice${o.due.invoices === 1 ? "" : "s"} · pay in billing`
                  : "Nothing to pay now"
              }
            />
          )}
        </Link>
      </div>
      <div className="mt-4 grid grid-cols-2 gap-4 lg:grid-cols-4">
        <MonthSpendCard spend={o.month} />
        <Stat label="GPU quota" value={o.tenant.gpuQuota} hint="Most GPUs your work may hold at once" />
        <Stat label="Users" value={o.users} />
        <Stat label="Live API keys" value={o.keys} />
      </div>
      <Card className="mt-6">
        <CardHeader title={`Your role: ${p.role === "tenant_admin" ? "admin" : "member"}`} />
        <p className="px-5 py-4 text-sm text-slate-700">
          {ROLE_SUMMARIES.tenant_member}{" "}
          {p.role === "tenant_admin"
            ? ROLE_SUMMARIES.tenant_admin
            : "Admins also manage users and API keys, and may cancel any of the organisation's jobs."}
        </p>
        {p.role !== "tenant_admin" && admins.length ? (
          <p className="border-t border-slate-100 px-5 py-3 text-sm text-slate-700" data-testid="tenant-admins">
            Your admins:{" "}
            {admins.map((a, i) => (
              <span key={a.email}>
                {i ? ", " : ""}
                {a.name} (
                <a className="text-indigo-700 underline" href={`mailto:${a.email}`}>
                  {a.email}
                </a>
                )
              </span>
            ))}
          </p>
        ) : null}
      </Card>
      <Card className="mt-6">
        <CardHeader title="Recent activity in your tenant" />
        <AuditList plane="tenant" entries={toAuditViews(o.recent)} empty="No activity yet." />
      </Card>
    </>
  );
});
