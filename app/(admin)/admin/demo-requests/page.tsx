import { updateDemoRequestAction } from "@/app/_actions/site";
import { InlineAction } from "@/components/forms/alert-forms";
import { Badge } from "@/components/ui/badge";
import { FilterTabs, OlderLink } from "@/components/ui/list-nav";
import { Card, CardHeader, EmptyState, PageHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import { DEMO_REQUEST_STATUSES } from "@/lib/marketing/schemas";
import { listDemoRequests } from "@/lib/marketing/site";
import { page } from "@/lib/pages/page";
import { PageSkeleton } from "@/components/shell/page-skeleton";

export const metadata = { title: "Demo requests" };

const tones = { new: "indigo", contacted: "amber", closed: "neutral" } as const;

export default page(
  { plane: "operator", path: "/admin/demo-requests", loading: <PageSkeleton /> },
  async ({ principal: p, searchParams: sp }) => {
    const status = (DEMO_REQUEST_STATUSES as readonly string[]).includes(sp.status ?? "") ? sp.status : undefined;
    const page = await listDemoRequests(p, { limit: 50, status, cursor: sp.cursor }).catch(() =>
      listDemoRequests(p, { limit: 50, status }),
    );
    return (
      <>
        <PageHeader
          title="Demo requests"
          description="Visitors who asked for a demo on the public site. Each one is also announced through the notification channels."
        />
        <Card>
          <CardHeader
            title="Inbox"
            actions={
              <FilterTabs
                label="Filter by status"
                base="/admin/demo-requests"
                current={status}
                options={[
                  ["", "All"],
                  ["new", "New"],
                  ["contacted", "Contacted"],
                  ["closed", "Closed"],
                ]}
              />
            }
          />
          {page.data.length === 0 ? (
            <EmptyState title="No demo requests">The “Request a demo” button on the public site lands here.</EmptyState>
          ) : (
            <Table caption="Demo requests">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Received</Th>
                  <Th>Who</Th>
                  <Th>Message</Th>
                  <Th>Status</Th>
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {page.data.map((r) => (
                  <tr key={r.id} className="align-top">
                    <Td>{formatDateTime(r.createdAt)}</Td>
                    <Td wrap>
                      <p className="font-medium text-slate-900">{r.name}</p>
                      <a className="text-indigo-700 hover:underline" href={`mailto:${r.email}`}>
                        {r.email}
                      </a>
                      {r.company ? <p className="text-xs text-slate-500">{r.company}</p> : null}
                    </Td>
                    <Td wrap className="max-w-md text-slate-600">
                      {r.message ?? "—"}
                    </Td>
                    <Td>
                      <Badge tone={tones[r.status as keyof typeof tones] ?? "neutral"}>{r.status}</Badge>
                      {r.handledBy ? <p className="mt-1 text-xs text-slate-500">by {r.handledBy}</p> : null}
                    </Td>
                    <Td className="space-x-2 text-right">
                      {r.status === "new" ? (
                        <InlineAction action={updateDemoRequestAction} fields={{ id: r.id, status: "contacted" }} label="Mark contacted" />
                      ) : null}
                      {r.status !== "closed" ? (
                        <InlineAction action={updateDemoRequestAction} fields={{ id: r.id, status: "closed" }} label="Close" />
                      ) : null}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
          <OlderLink href={page.nextCursor ? `/admin/demo-requests?cursor=${page.nextCursor}${status ? `&status=${status}` : ""}` : null} />
        </Card>
      </>
    );
  },
);
