import Link from "next/link";
import { createTenantAction } from "@/app/_actions/tenants";
import { CreateTenantForm } from "@/components/forms/tenant-forms";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { fleetCapacity } from "@/lib/jobs/queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";
import { SignupState } from "@/components/shell/signup-state";

export const metadata = { title: "Tenants" };

export default page({ plane: "operator", path: "/admin/tenants" }, async () => {
  const [tenants, capacity] = await Promise.all([listTenantsWithCounts(), fleetCapacity()]);
  return (
    <>
      <PageHeader
        title="Tenants"
        description="Organisations that run work on the fleet, each with a GPU quota: made here by an operator, or signed up on their own."
      />
      <Card className="mb-6">
        <CardHeader title="New tenant" />
        <CreateTenantForm action={createTenantAction} fleetGpus={Object.values(capacity).reduce((a, b) => a + b, 0)} />
      </Card>
      <Card>
        <CardHeader title={`All tenants (${tenants.length})`} />
        {tenants.length === 0 ? (
          <EmptyState title="No tenants yet">Create the first one above; then add its admin from the tenant page.</EmptyState>
        ) : (
          <Table caption="Tenants">
            <thead className="bg-slate-50">
              <tr>
                <Th>Name</Th>
                <Th>Status</Th>
                <Th>Origin</Th>
                <Th className="text-right">GPU quota</Th>
                <Th className="text-right">Users</Th>
                <Th className="text-right">Keys</Th>
                <Th>Billing email</Th>
                <Th>Created</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {tenants.map((t) => (
                <tr key={t.id} className="hover:bg-slate-50">
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/tenants/${t.id}`}>
                      {t.name}
                    </Link>
                  </Td>
                  <Td>
                    <Badge tone={t.status === "active" ? "green" : "amber"}>{t.status}</Badge>
                  </Td>
                  <Td>
                    <SignupState origin={t.origin} expiresAt={t.signupExpiresAt} admin={t.users[0] ?? null} />
                  </Td>
                  <Td className="text-right tabular-nums">{t.gpuQuota}</Td>
                  <Td className="text-right tabular-nums">{t._count.users}</Td>
                  <Td className="text-right tabular-nums">{t._count.apiKeys}</Td>
                  <Td>{t.billingEmail ?? "—"}</Td>
                  <Td>{formatDateTime(t.createdAt)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
});
