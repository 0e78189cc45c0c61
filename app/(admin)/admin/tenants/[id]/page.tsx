import Link from "next/link";
import { depositAction, generateInvoiceAction, setBillingModeAction } from "@/app/_actions/billing";
import { updateBurstAction } from "@/app/_actions/providers";
import { BurstForm } from "@/components/providers/burst-form";
import { updateTenantAction, updateTenantLimitsAction } from "@/app/_actions/tenants";
import { TenantLimitsForm } from "@/components/forms/self-service-forms";
import { CardDepositList } from "@/components/billing/card-deposit-list";
import { SignupState } from "@/components/shell/signup-state";
import { listCardDeposits } from "@/lib/billing/card-deposits";
import { BillingModeForm, DepositForm, GenerateInvoiceForm } from "@/components/forms/billing-forms";
import { balanceOf } from "@/lib/billing/ledger";
import { depositReference, formatCents } from "@/lib/billing/money";
import { createUserAction, updateUserAction } from "@/app/_actions/users";
import { EditTenantForm, TenantStatusForm } from "@/components/forms/tenant-forms";
import { CreateUserForm } from "@/components/forms/user-forms";
import { UsersTable } from "@/components/shell/users-table";
import { resetTwoFactorAction } from "@/app/_actions/accounts";
import { TenantActivity } from "@/components/shell/tenant-activity";
import { operatorTenantOverview } from "@/lib/tenants/tenant-page";
import { Badge } from "@/components/ui/badge";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { fleetCapacity } from "@/lib/jobs/queries";
import { getTenantOrThrow } from "@/lib/tenants/queries";
import { listUsers } from "@/lib/users/queries";
import { nullIfRefused } from "@/lib/errors";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Tenant" };

export default page(
  {
    plane: "operator",
    path: "/admin/tenants/[id]",
    ids: ["id"],
    load: async ({ principal, ids: { id } }) => {
      const tenant = await nullIfRefused(getTenantOrThrow(principal, id));
      if (!tenant) return null;
      const [users, balance, capacity, deposits, activity] = await Promise.all([
        listUsers(principal, { limit: 500, tenant_id: id }),
        balanceOf(id),
        fleetCapacity(),
        listCardDeposits(principal, id, { limit: 10 }),
        operatorTenantOverview(principal, id),
      ]);
      return { tenant, users, balance, capacity, deposits: deposits.data, activity };
    },
  },
  ({ ids: { id }, data: { tenant, users, balance, capacity, deposits, activity } }) => {
    return (
      <>
        <nav aria-label="Breadcrumb" className="mb-2 text-sm text-slate-500">
          <Link href="/admin/tenants" className="hover:underline">
            Tenants
          </Link>{" "}
          / <span aria-current="page">{tenant.name}</span>
        </nav>
        <PageHeader
          title={tenant.name}
          description={`GPU quota ${tenant.gpuQuota} · ${tenant.billingEmail ?? "no billing email"}`}
          actions={
            <div className="flex items-center gap-3">
              <Badge tone={tenant.status === "active" ? "green" : "amber"}>{tenant.status}</Badge>
              <TenantStatusForm action={updateTenantAction} tenant={tenant} />
            </div>
          }
        />
        {tenant.origin === "signup" ? (
          <p className="mb-6 flex flex-wrap items-center gap-3 text-sm text-slate-600">
            <SignupState origin={tenant.origin} expiresAt={tenant.signupExpiresAt} admin={null} />
            Signed up on its own; it started with the self-service defaults (Settings → Self-service sign-up).
          </p>
        ) : null}
        <TenantActivity tenantId={tenant.id} quota={tenant.gpuQuota} view={activity} />
        <Card className="mb-6">
          <CardHeader title="Settings" />
          <EditTenantForm action={updateTenantAction} tenant={tenant} fleetGpus={Object.values(capacity).reduce((a, b) => a + b, 0)} />
        </Card>
        <Card className="mb-6">
          <CardHeader
            title="Billing"
            description={`${tenant.billingMode === "prepaid" ? "Prepaid: work is charged to the balance as it runs; at zero new work waits and running work stops after the grace period." : "Invoiced monthly for the month before."} Balance ${formatCents(balance)}. Its bank transfers quote ${depositReference(id)} (deposits) or the invoice number.`}
            actions={<BillingModeForm action={setBillingModeAction} tenantId={tenant.id} mode={tenant.billingMode} />}
          />
          <div className="grid divide-y divide-slate-100 lg:grid-cols-2 lg:divide-x lg:divide-y-0">
            <GenerateInvoiceForm action={generateInvoiceAction} tenantId={tenant.id} openBase="/admin/billing/invoices" />
            <DepositForm action={depositAction} tenantId={tenant.id} />
          </div>
        </Card>
        <Card className="mb-6" id="burst">
          <CardHeader
            title="Burst to GPU providers"
            description="Its waiting jobs may run on rented provider capacity, up to this price per GPU-hour."
          />
          <BurstForm
            action={updateBurstAction}
            tenantId={tenant.id}
            enabled={tenant.burstEnabled}
            maxPriceCents={tenant.burstMaxPriceCentsPerGpuHour}
            canEdit
            allowed={tenant.burstAllowed}
            operator
          />
        </Card>
        <Card className="mb-6">
          <CardHeader
            title="Limits"
            description="What the tenant may hold at once and book; empty is no limit. Raise them when a self-service tenant asks."
          />
          <TenantLimitsForm
            action={updateTenantLimitsAction}
            tenantId={tenant.id}
            limits={{
              max_pods: tenant.maxPods,
              max_reservation_hours: tenant.maxReservationHours,
              max_reservations: tenant.maxReservations,
            }}
          />
        </Card>
        {deposits.length ? (
          <Card className="mb-6">
            <CardHeader title="Card payments" description="Deposits the tenant started through Stripe Checkout." />
            <CardDepositList deposits={deposits} />
          </Card>
        ) : null}
        <Card className="mb-6">
          <CardHeader title="Add a user" description="Tenant admins can also add their own users from their dashboard." />
          <CreateUserForm action={createUserAction} tenantId={tenant.id} />
        </Card>
        <Card>
          <CardHeader title={`Users (${users.data.length})`} />
          <UsersTable
            action={updateUserAction}
            users={users.data.map((u) => ({
              id: u.id,
              name: u.name,
              email: u.email,
              role: u.role,
              disabled: u.disabledAt !== null,
              lastLoginAt: u.lastLoginAt?.toISOString() ?? null,
              twoFactor: u.totpEnabledAt !== null,
            }))}
            resetTwoFactor={resetTwoFactorAction}
          />
        </Card>
      </>
    );
  },
);
