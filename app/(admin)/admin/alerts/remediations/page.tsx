import Link from "next/link";
import { AlertsNav } from "@/components/alerts/alerts-nav";
import { AutoRefresh } from "@/components/fleet/auto-refresh";
import { Badge } from "@/components/ui/badge";
import { OlderLink } from "@/components/ui/list-nav";
import { Card, CardHeader, EmptyState, PageHeader, Stat } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { listRemediations } from "@/lib/alerts/queries";
import { remediationJson } from "@/lib/alerts/remediation-json";
import { listRemediationsQuery } from "@/lib/alerts/schemas";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Remediations" };

export default page({ plane: "operator", path: "/admin/alerts/remediations" }, async ({ principal: p, searchParams: sp }) => {
  const parsed = listRemediationsQuery.safeParse({ cursor: sp.cursor || undefined, limit: 50 });
  const page = await listRemediations(p, parsed.success ? parsed.data : { limit: 50 }).catch(() => listRemediations(p, { limit: 50 }));
  const { cap } = page;
  const left = Math.max(0, cap.limit - cap.used);
  return (
    <>
      <PageHeader
        title="Remediations"
        description="Nodes the platform took out of service on its own, and the ones it left to a human because the blast-radius cap was reached. Return a node to service from its page after inspection."
        actions={<AutoRefresh seconds={10} />}
      />
      <AlertsNav current="/admin/alerts/remediations" />
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-3">
        <Stat
          label="Cap"
          value={`${cap.limit} per ${Math.round(cap.window_s / 60)} min`}
          hint="Fleet-wide; change it under Settings → Automatic remediation"
        />
        <Stat label="Used in the window" value={cap.used} hint="Counted in the database, across every app instance" />
        <Stat
          label="Left"
          value={left}
          hint={left === 0 ? "New faults raise critical alerts instead" : "Automatic quarantines still allowed"}
        />
      </div>
      <Card className="mt-6">
        <CardHeader title="Log" description="Newest first." />
        {page.data.length === 0 ? (
          <EmptyState title="No automatic remediation yet">
            Fatal XIDs and repeated overheating quarantine their node here, within the cap.
          </EmptyState>
        ) : (
          <Table caption="Remediations">
            <thead className="bg-slate-50">
              <tr>
                <Th>When</Th>
                <Th>Node</Th>
                <Th>Cause</Th>
                <Th>Outcome</Th>
                <Th>Jobs requeued</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {page.data.map(remediationJson).map((r) => (
                <tr key={r.id}>
                  <Td>
                    <span title={formatDateTime(r.created_at)}>{formatRelative(r.created_at)}</span>
                  </Td>
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/nodes/${r.node_id}`}>
                      {r.hostname}
                    </Link>
                  </Td>
                  <Td wrap>{typeof r.details.summary === "string" ? r.details.summary : r.cause}</Td>
                  <Td>
                    {r.outcome === "quarantined" ? (
                      <Badge tone="red">quarantined</Badge>
                    ) : (
                      <Badge tone="amber">capped: left to a human</Badge>
                    )}
                  </Td>
                  <Td className="tabular-nums">{r.jobs_requeued}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <OlderLink href={page.nextCursor ? `/admin/alerts/remediations?cursor=${page.nextCursor}` : null} />
      </Card>
    </>
  );
});
