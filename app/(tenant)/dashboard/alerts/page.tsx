import { AlertsTable } from "@/components/alerts/alerts-table";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { alertJson, listAlerts } from "@/lib/alerts/queries";
import { requireTenantPage } from "@/lib/auth/session";

export const metadata = { title: "Alerts" };

export default async function TenantAlertsPage() {
  const p = await requireTenantPage("/dashboard/alerts");
  const [firing, resolved] = await Promise.all([listAlerts(p, { limit: 100, status: "firing" }), listAlerts(p, { limit: 50, status: "resolved" })]);
  return (
    <>
      <PageHeader title="Alerts" description="What the platform noticed about your work: jobs moved off failed hardware, GPUs you hold that sit idle." />
      <Card>
        <CardHeader title="Open" />
        {firing.data.length === 0 ? <EmptyState title="Nothing needs your attention" /> : <AlertsTable plane="tenant" alerts={firing.data.map((a) => alertJson(a, p))} />}
      </Card>
      <Card className="mt-6">
        <CardHeader title="Resolved" description="The last 50." />
        {resolved.data.length === 0 ? <EmptyState title="No resolved alerts yet" /> : <AlertsTable plane="tenant" alerts={resolved.data.map((a) => alertJson(a, p))} />}
      </Card>
    </>
  );
}
