import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { ApiKeysTable, splitKeys, toApiKeyItems } from "@/components/shell/api-keys-table";
import { FilterTabs } from "@/components/ui/list-nav";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys } from "@/lib/api-keys/queries";
import { page } from "@/lib/pages/page";

export const metadata = { title: "API keys" };

export default page({ plane: "tenant_admin", path: "/dashboard/api-keys" }, async ({ principal: p, searchParams: { show } }) => {
  const keys = await listApiKeys(p, { limit: 500, include_revoked: "true" });
  const split = splitKeys(toApiKeyItems(keys.data, true));
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for your scripts and CI: they act for your organisation with admin rights. Send them as 'Authorization: Bearer gf_…'."
      />
      <Card className="mb-6">
        <CardHeader title="New key" />
        <CreateApiKeyForm action={createApiKeyAction} scopes={["tenant"]} />
      </Card>
      <Card>
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
    </>
  );
});
