import Link from "next/link";
import { AuditList, toAuditViews } from "@/components/shell/audit-list";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { tenantOverview } from "@/lib/platform/overview";
import { tenantAdmins } from "@/lib/users/queries";
import { ROLE_SUMMARIES } from "@/lib/users/roles";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Dashboard" };

export default page({ plane: "tenant", path: "/dashboard" }, async ({ principal: p }) => {
  const [o, admins] = await Promise.all([tenantOverview(p), tenantAdmins(p.tenantId)]);
  return (
    <>
      <PageHeader
        title={o.tenant.name}
        description="Your organisation's space on the GPU fleet."
        actions={<Badge tone={o.tenant.status === "active" ? "green" : "amber"}>{o.tenant.status}</Badge>}
      />
      <div className="grid gap-4 sm:grid-cols-3">
        <Stat label="GPUs in use" value={`${o.gpusInUse} / ${o.tenant.gpuQuota}`} hint="Jobs and endpoint replicas, against your quota" />
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
      </div>
      <div className="mt-4 grid gap-4 sm:grid-cols-3">
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
