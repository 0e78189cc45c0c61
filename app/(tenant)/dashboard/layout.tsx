import { AppShell } from "@/components/shell/app-shell";
import { requireTenantPage } from "@/lib/auth/session";
import { tenantName, userSummary } from "@/lib/platform/overview";

export const dynamic = "force-dynamic";

export default async function TenantLayout({ children }: { children: React.ReactNode }) {
  const p = await requireTenantPage("/dashboard");
  const [user, name] = await Promise.all([userSummary(p.userId), tenantName(p.tenantId)]);
  const nav = [
    { href: "/dashboard", label: "Overview" },
    { href: "/dashboard/jobs", label: "Jobs" },
    { href: "/dashboard/pipelines", label: "Pipelines" },
    { href: "/dashboard/endpoints", label: "Endpoints" },
    { href: "/dashboard/reservations", label: "Reservations" },
    { href: "/dashboard/alerts", label: "Alerts" },
    { href: "/dashboard/billing", label: "Billing" },
    ...(p.role === "tenant_admin"
      ? [
          { href: "/dashboard/users", label: "Users" },
          { href: "/dashboard/api-keys", label: "API keys" },
        ]
      : []),
    { href: "/docs/api", label: "API reference" },
  ];
  return (
    <AppShell
      planeLabel="Tenant"
      root="/dashboard"
      nav={nav}
      context={name}
      user={{ ...user, roleLabel: p.role === "tenant_admin" ? `Admin of ${name}` : `Member of ${name}` }}
    >
      {children}
    </AppShell>
  );
}
