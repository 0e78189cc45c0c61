import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { createServiceAccountAction, disableServiceAccountAction } from "@/app/_actions/service-accounts";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { CreateServiceAccountForm } from "@/components/forms/service-account-forms";
import { ApiKeysTable, splitKeys, toApiKeyItems } from "@/components/shell/api-keys-table";
import { ServiceAccountsTable } from "@/components/shell/service-accounts-table";
import { FilterTabs } from "@/components/ui/list-nav";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys, withOwners } from "@/lib/api-keys/queries";
import { page } from "@/lib/pages/page";
import { listServiceAccounts } from "@/lib/service-accounts/service-accounts";

export const metadata = { title: "API keys" };

export default page({ plane: "tenant_admin", path: "/dashboard/api-keys" }, async ({ principal: p, searchParams: { show } }) => {
  const [keys, accounts] = await Promise.all([
    listApiKeys(p, { limit: 500, include_revoked: "true" }),
    listServiceAccounts(p, { include_disabled: "true" }),
  ]);
  const split = splitKeys(toApiKeyItems(await withOwners(p, keys.data), true));
  const enabled = accounts.filter((a) => !a.disabled_at);
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for your scripts and CI, sent as 'Authorization: Bearer gf_…'. A key acts for its owner — you, or a service account — with no more than the owner's role, and stops when the owner's rights do."
      />
      <Card className="mb-6">
        <CardHeader title="New key" />
        <CreateApiKeyForm
          action={createApiKeyAction}
          scopes={["tenant"]}
          accounts={enabled.map((a) => ({ id: a.id, name: a.name, tenantId: a.tenant_id, role: a.role }))}
        />
      </Card>
      <Card className="mb-6">
        <CardHeader
          title={show === "inactive" ? "Revoked and expired keys" : "Keys in use"}
          actions={
            <FilterTabs
              label="Which keys"
              base="/dashboard/api-keys"
              param="show"
              current={show === "inactive" ? "inactive" : undefined}
              options={[
                ["", `In use (${split.live.length})`],
                ["inactive", `Revoked and expired (${split.inactive.length})`],
              ]}
            />
          }
        />
        <ApiKeysTable keys={show === "inactive" ? split.inactive : split.live} revokeAction={revokeApiKeyAction} />
      </Card>
      <Card>
        <CardHeader
          title="Service accounts"
          description="Owners for keys that must outlive any one person. Its keys act with its role at most; disabling it stops them all."
        />
        <CreateServiceAccountForm action={createServiceAccountAction} />
        <ServiceAccountsTable accounts={accounts} disableAction={disableServiceAccountAction} />
      </Card>
    </>
  );
});
