import { AppShell } from "@/components/shell/app-shell";
import { requireOperatorPage } from "@/lib/auth/session";
import { userSummary } from "@/lib/platform/overview";

export const dynamic = "force-dynamic";

const nav = [
  { href: "/admin", label: "Overview" },
  { href: "/admin/tenants", label: "Tenants" },
  { href: "/admin/clusters", label: "Clusters" },
  { href: "/admin/jobs", label: "Queue" },
  { href: "/admin/scheduler", label: "Scheduler" },
  { href: "/admin/endpoints", label: "Endpoints" },
  { href: "/admin/pods", label: "Pods" },
  { href: "/admin/reservations", label: "Reservations" },
  { href: "/admin/providers", label: "Providers" },
  { href: "/admin/attestation", label: "Attestation" },
  { href: "/admin/alerts", label: "Alerts" },
  { href: "/admin/billing", label: "Billing" },
  { href: "/admin/demo-requests", label: "Demo requests" },
  { href: "/admin/analytics", label: "Site analytics" },
  { href: "/admin/api-keys", label: "API keys" },
  { href: "/admin/audit", label: "Audit log" },
  { href: "/admin/settings", label: "Settings" },
  { href: "/docs/api", label: "API reference", external: true },
];

export default async function AdminLayout({ children }: { children: React.ReactNode }) {
  const p = await requireOperatorPage("/admin", { layout: true });
  const user = await userSummary(p.userId);
  return (
    <AppShell planeLabel="Operator" root="/admin" nav={nav} context="Operator console" user={{ ...user, roleLabel: "Operator" }}>
      {children}
    </AppShell>
  );
}
