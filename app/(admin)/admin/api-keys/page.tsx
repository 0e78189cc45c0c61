import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { ApiKeysTable, splitKeys, toApiKeyItems } from "@/components/shell/api-keys-table";
import { FilterTabs } from "@/components/ui/list-nav";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys } from "@/lib/api-keys/queries";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { listUsers } from "@/lib/users/queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";
import { isUuid } from "@/lib/ids";
import { page } from "@/lib/pages/page";

export const metadata = { title: "API keys" };

export default page({ plane: "operator", path: "/admin/api-keys" }, async ({ principal: p, searchParams }) => {
  const { show, created_by } = searchParams;
  const creator = isUuid(created_by) ? created_by : undefined;
  const [keys, tenants, clusters, users] = await Promise.all([
    listApiKeys(p, { limit: 500, include_revoked: "true", created_by_user_id: creator }),
    listTenantsWithCounts(),
    listClusters(p, { limit: 500 }),
    listUsers(p, { limit: 500 }),
  ]);
  const split = splitKeys(toApiKeyItems(keys.data));
  const inactive = show === "inactive";
  return (
    <>
      <PageHeader
        title="API keys"
        description="Operator keys can do everything; tenant keys act for one tenant; agent keys let node agents of one cluster register and report. Only a hash is stored: a key is shown once."
      />
      <Card className="mb-6">
        <CardHeader title="New key" />
        <CreateApiKeyForm
          action={createApiKeyAction}
          scopes={["operator", "tenant", "agent"]}
          tenants={tenants.filter((t) => t.status === "active").map((t) => ({ id: t.id, name: t.name }))}
          clusters={clusters.data.map((c) => ({ id: c.id, name: c.name }))}
        />
      </Card>
      <Card>
        <CardHeader
          title={inactive ? "Revoked and expired keys" : "Keys in use"}
          actions={
            <FilterTabs
              label="Which keys"
              base="/admin/api-keys"
              param="show"
              current={inactive ? "inactive" : undefined}
              options={[
                ["", `In use (${split.live.length})`],
                ["inactive", `Revoked and expired (${split.inactive.length})`],
              ]}
            />
          }
        />
        <form method="get" className="mb-4 flex items-end gap-2 text-sm" aria-label="Filter keys by creator">
          {inactive ? <input type="hidden" name="show" value="inactive" /> : null}
          <label className="flex flex-col gap-1">
            <span className="text-slate-600">Created by</span>
            <select name="created_by" defaultValue={creator ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5">
              <option value="">anyone</option>
              {users.data.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email}
                  {u.disabledAt ? " (disabled)" : ""}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="rounded-md border border-slate-300 px-3 py-1.5 hover:bg-slate-50">
            Show
          </button>
        </form>
        <ApiKeysTable keys={inactive ? split.inactive : split.live} revokeAction={revokeApiKeyAction} />
      </Card>
    </>
  );
});
