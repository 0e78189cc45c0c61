import Link from "next/link";
import { AuditList } from "@/components/shell/audit-list";
import { ButtonLink } from "@/components/ui/button";
import { Card, CardHeader, PageHeader, Stat } from "@/components/ui/card";
import { requireOperatorPage } from "@/lib/auth/session";
import { operatorOverview } from "@/lib/platform/overview";

export const metadata = { title: "Operator overview" };

export default async function AdminHome() {
  const p = await requireOperatorPage("/admin");
  const o = await operatorOverview(p);
  return (
    <>
      <PageHeader
        title="Overview"
        description="Tenants, access and activity across the platform."
        actions={<ButtonLink href="/admin/tenants">Manage tenants</ButtonLink>}
      />
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Stat label="Active tenants" value={o.tenantsActive} hint={`${o.tenantsSuspended} suspended`} />
        <Stat label="GPU quota granted" value={o.quotaGranted} hint="Sum over active tenants" />
        <Stat label="Clusters" value={o.clusters} hint={`${o.keysByScope.agent ?? 0} live agent keys`} />
        <Stat label="Users" value={o.users} hint={`${(o.keysByScope.tenant ?? 0) + (o.keysByScope.operator ?? 0)} live API keys`} />
      </div>
      <Card className="mt-6">
        <CardHeader title="Recent activity" description="Every write is recorded." actions={<Link className="text-sm font-medium text-indigo-700 hover:underline" href="/admin/audit">Full audit log</Link>} />
        <AuditList entries={o.recent} />
      </Card>
    </>
  );
}
