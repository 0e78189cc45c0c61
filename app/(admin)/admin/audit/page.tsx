import { OlderLink } from "@/components/ui/list-nav";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { listAuditLog } from "@/lib/audit/queries";
import { requireOperatorPage } from "@/lib/auth/session";

export const metadata = { title: "Audit log" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<{ cursor?: string; action?: string }> }) {
  const p = await requireOperatorPage("/admin/audit");
  const sp = await searchParams;
  const cursor = sp.cursor && /^\d+$/.test(sp.cursor) ? sp.cursor : undefined;
  const action = sp.action?.slice(0, 100) || undefined;
  const page = await listAuditLog(p, { limit: 50, cursor, action });
  return (
    <>
      <PageHeader title="Audit log" description="Every write to the platform: who, what, when, from which request." />
      <Card>
        <CardHeader
          title="Entries"
          actions={
            <form className="flex gap-2" role="search">
              <label htmlFor="action-filter" className="sr-only">Filter by action</label>
              <input id="action-filter" name="action" defaultValue={action} placeholder="e.g. api_key." className="rounded-md px-3 py-1.5 text-sm ring-1 ring-slate-300" />
              <button className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white">Filter</button>
            </form>
          }
        />
        {page.data.length === 0 ? (
          <EmptyState title="No entries match" />
        ) : (
          <Table caption="Audit entries">
            <thead className="bg-slate-50"><tr><Th>When</Th><Th>Action</Th><Th>By</Th><Th>Target</Th><Th>Details</Th></tr></thead>
            <tbody className="divide-y divide-slate-100">
              {page.data.map((e) => {
                const { by, ...rest } = e.details as { by?: string };
                return (
                  <tr key={e.id}>
                    <Td>{formatDateTime(e.created_at)}</Td>
                    <Td><span className="font-mono text-xs text-indigo-700">{e.action}</span></Td>
                    <Td>{by ?? e.actor_kind}</Td>
                    <Td className="font-mono text-xs">{e.target_type}{e.target_id ? `:${e.target_id.slice(0, 8)}` : ""}</Td>
                    <Td className="max-w-md truncate font-mono text-xs text-slate-500" >{JSON.stringify(rest)}</Td>
                  </tr>
                );
              })}
            </tbody>
          </Table>
        )}
        <OlderLink label="Older entries →" href={page.next_cursor ? `/admin/audit?cursor=${page.next_cursor}${action ? `&action=${encodeURIComponent(action)}` : ""}` : null} />
      </Card>
    </>
  );
}
