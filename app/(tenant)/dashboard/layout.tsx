import { headers } from "next/headers";
import { forbidden } from "next/navigation";
import { AppShell } from "@/components/shell/app-shell";
import { isAdminOnlyTenantPath, PATH_HEADER } from "@/lib/auth/admin-only";
import { requireTenantPage } from "@/lib/auth/session";
import { BalanceBanner } from "@/components/billing/payment-guides";
import { balanceOutlook } from "@/lib/billing/usage";
import { tenantBillingMode, tenantName, userSummary } from "@/lib/platform/overview";

export const dynamic = "force-dynamic";

export default async function TenantLayout({ children }: { children: React.ReactNode }) {
  const p = await requireTenantPage("/dashboard", { layout: true });
  // before anything streams, so a member gets a real 403 (the page's own check is the second line)
  if (p.role !== "tenant_admin" && isAdminOnlyTenantPath((await headers()).get(PATH_HEADER) ?? "")) forbidden();
  const [user, name, billing] = await Promise.all([userSummary(p.userId), tenantName(p.tenantId), tenantBillingMode(p.tenantId)]);
  // a prepaid organisation sees its balance running out on every page, not only on Billing
  const outlook = billing === "prepaid" ? await balanceOutlook(p.tenantId) : null;
  const nav = [
    { href: "/dashboard", label: "Overview" },
    { href: "/dashboard/jobs", label: "Jobs" },
    { href: "/dashboard/pipelines", label: "Pipelines" },
    { href: "/dashboard/endpoints", label: "Endpoints" },
    { href: "/dashboard/pods", label: "Pods" },
    { href: "/dashboard/reservations", label: "Reservations" },
    { href: "/dashboard/alerts", label: "Alerts" },
    { href: "/dashboard/billing", label: "Billing" },
    ...(p.role === "tenant_admin"
      ? [
          { href: "/dashboard/users", label: "Users" },
          { href: "/dashboard/api-keys", label: "API keys" },
        ]
      : []),
    { href: "/docs/api", label: "API reference", external: true },
  ];
  return (
    <AppShell
      planeLabel="Tenant"
      root="/dashboard"
      nav={nav}
      context={name}
      user={{ ...user, roleLabel: p.role === "tenant_admin" ? `Admin of ${name}` : `Member of ${name}` }}
    >
      {outlook ? <BalanceBanner outlook={outlook} href="/dashboard/billing#add-funds" /> : null}
      {children}
    </AppShell>
  );
}
