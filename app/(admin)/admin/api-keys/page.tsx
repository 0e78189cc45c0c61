import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { ApiKeysTable, splitKeys, toApiKeyItems } from "@/components/shell/api-keys-table";
import { FilterTabs } from "@/components/ui/list-nav";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys } from "@/lib/api-keys/queries";
import { requireOperatorPage } from "@/lib/auth/session";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";

export const metadata = { title: "API keys" };

export default async function AdminApiKeysPage({ searchParams }: { searchParams: Promise<{ show?: string }> }) {
  const p = await requireOperatorPage("/admin/api-keys");
  const [keys, tenants, clusters] = await Promise.all([
    listApiKeys(p, { limit: 500, include_revoked: "true" }),
    listTenantsWithCounts(),
    listClusters(p, { limit: 500 }),
  ]);
  const { show } = await searchParams;
  const split = splitKeys(toApiKeyItems(keys.data));
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
          title={show === "inactive" ? "Revoked and expired keys" : "Keys in use"}
          actions={<FilterTabs label="Which keys" base="/admin/api-keys" param="show" current={show === "inactive" ? "inactive" : undefined} options={[["", `In use (${split.live.length})`], ["inactive", `Revoked and expired (${split.inactive.length})`]]} />}
        />
        <ApiKeysTable keys={show === "inactive" ? split.inactive : split.live} revokeAction={revokeApiKeyAction} />
      </Card>
    </>
  );
}
