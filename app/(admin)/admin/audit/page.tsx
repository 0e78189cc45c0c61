import { AuditTable, toAuditViews } from "@/components/shell/audit-list";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { ListToolbar, Pager } from "@/components/ui/list-toolbar";
import { auditListParams, listAuditPage } from "@/lib/audit/list-audit";
import { listHref, readListParams } from "@/lib/http/list-params";
import { listTenantsWithCounts } from "@/lib/tenants/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Audit log" };

const AREAS: Array<[string, string]> = [
  ["", "Anything"],
  ["tenant.", "Tenants"],
  ["user.", "Users"],
  ["api_key.", "API keys"],
  ["cluster.", "Clusters"],
  ["node.", "Nodes"],
  ["job.", "Jobs"],
  ["pipeline.", "Pipelines"],
  ["endpoint.", "Endpoints"],
  ["billing.", "Billing"],
  ["alert", "Alerts and silences"],
  ["settings.", "Settings"],
];
const ACTORS: Array<[string, string]> = [
  ["", "Anyone"],
  ["operator", "Operators"],
  ["tenant", "Tenant users and keys"],
  ["agent", "Node agents"],
  ["system", "The platform"],
];

export default page({ plane: "operator", path: "/admin/audit" }, async ({ principal: p, searchParams }) => {
  const q = readListParams(auditListParams, searchParams);
  const [page, tenants] = await Promise.all([listAuditPage(p, q), listTenantsWithCounts()]);
  return (
    <>
      <PageHeader title="Audit log" description="Every write to the platform: who, what, to which object, when, from which request." />
      <Card>
        <CardHeader title="Entries" description="Open an entry's details for everything it recorded." />
        <ListToolbar
          label="Filter the audit log"
          base="/admin/audit"
          values={q}
          search="Action, object id, name or who"
          selects={[
            { name: "action", label: "Area", options: AREAS },
            { name: "actor_kind", label: "By", options: ACTORS },
            { name: "tenant_id", label: "Tenant", options: [["", "Any tenant"], ...tenants.map((t): [string, string] => [t.id, t.name])] },
          ]}
          dates="Date"
          sort={[
            ["newest", "Newest first"],
            ["oldest", "Oldest first"],
          ]}
          exportHref={listHref("/api/audit-log/export", { ...q, page: undefined, per_page: undefined })}
        />
        <AuditTable entries={toAuditViews(page.rows)} plane="admin" />
        <Pager page={q.page} perPage={q.per_page} total={page.total} href={(c) => listHref("/admin/audit", q, c)} />
      </Card>
    </>
  );
});
