import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { createServiceAccountAction, disableServiceAccountAction } from "@/app/_actions/service-accounts";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { CreateServiceAccountForm } from "@/components/forms/service-account-forms";
import { ApiKeysTable, splitKeys, toApiKeyItems } from "@/components/shell/api-keys-table";
import { ServiceAccountsTable } from "@/components/shell/service-accounts-table";
import { FilterTabs } from "@/components/ui/list-nav";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys, withOwners } from "@/lib/api-keys/queries";
import { bundleSigningKey, installCommand } from "@/lib/agent-install/signing-key";
import { env } from "@/lib/env";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { listUsers } from "@/lib/users/queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";
import { isUuid } from "@/lib/ids";
import { page } from "@/lib/pages/page";
import { listServiceAccounts } from "@/lib/service-accounts/service-accounts";

export const metadata = { title: "API keys" };

export default page({ plane: "operator", path: "/admin/api-keys" }, async ({ principal: p, searchParams }) => {
  const { show, owner } = searchParams;
  const ownerId = isUuid(owner) ? owner : undefined;
  const [keys, tenants, clusters, users, accounts] = await Promise.all([
    listApiKeys(p, { limit: 500, include_revoked: "true", ...(ownerId ? { owner: ownerId } : {}) }),
    listTenantsWithCounts(),
    listClusters(p, { limit: 500 }),
    listUsers(p, { limit: 500 }),
    listServiceAccounts(p, { include_disabled: "true" }),
  ]);
  const split = splitKeys(toApiKeyItems(await withOwners(p, keys.data), false));
  const tenantNames = new Map(tenants.map((t) => [t.id, t.name]));
  const inactive = show === "inactive";
  const signingKey = bundleSigningKey();
  return (
    <>
      <PageHeader
        title="API keys"
        description="Operator keys can do everything; tenant keys act for one tenant; agent keys let node agents of one cluster register and report. Every key acts for its owner — a person or a service account — and stops when the owner's rights do. Only a hash is stored: a key is shown once."
      />
      <Card className="mb-6">
        <CardHeader title="New key" />
        <CreateApiKeyForm
          action={createApiKeyAction}
          scopes={["operator", "tenant", "agent"]}
          tenants={tenants.filter((t) => t.status === "active").map((t) => ({ id: t.id, name: t.name }))}
          clusters={clusters.data.map((c) => ({ id: c.id, name: c.name }))}
          accounts={accounts.filter((a) => !a.disabled_at).map((a) => ({ id: a.id, name: a.name, tenantId: a.tenant_id, role: a.role }))}
          agentInstall={{ command: signingKey ? installCommand(env().NEXTAUTH_URL ?? "https://CONTROL_PLANE", signingKey, "--key") : null }}
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
        <form method="get" className="mb-4 flex items-end gap-2 text-sm" aria-label="Filter keys by owner">
          {inactive ? <input type="hidden" name="show" value="inactive" /> : null}
          <label className="flex flex-col gap-1">
            <span className="text-slate-600">Owner</span>
            <select name="owner" defaultValue={ownerId ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5">
              <option value="">anyone</option>
              {users.data.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email}
                  {u.disabledAt ? " (disabled)" : ""}
                </option>
              ))}
              {accounts.map((a) => (
                <option key={a.id} value={a.id}>
                  service account {a.name}
                  {a.tenant_id ? ` (${tenantNames.get(a.tenant_id) ?? "tenant"})` : " (platform)"}
                  {a.disabled_at ? " (disabled)" : ""}
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
      <Card className="mt-6">
        <CardHeader
          title="Service accounts"
          description="Owners for keys that must outlive any one person: a fleet's node agents, CI, a tenant's integrations. The platform's own accounts (the command line, the seed) are listed here too. Disabling one stops all its keys."
        />
        <CreateServiceAccountForm
          action={createServiceAccountAction}
          tenants={tenants.filter((t) => t.status === "active").map((t) => ({ id: t.id, name: t.name }))}
        />
        <ServiceAccountsTable accounts={accounts} tenantNames={tenantNames} disableAction={disableServiceAccountAction} />
      </Card>
    </>
  );
});
