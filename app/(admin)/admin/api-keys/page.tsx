import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { ApiKeysTable, toApiKeyItems } from "@/components/shell/api-keys-table";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys } from "@/lib/api-keys/queries";
import { requireOperatorPage } from "@/lib/auth/session";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { listTenantsWithCounts } from "@/lib/tenants/queries";

export const metadata = { title: "API keys" };

export default async function AdminApiKeysPage() {
  const p = await requireOperatorPage("/admin/api-keys");
  const [keys, tenants, clusters] = await Promise.all([
    listApiKeys(p, { limit: 500, include_revoked: "true" }),
    listTenantsWithCounts(),
    listClusters(p, { limit: 500 }),
  ]);
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
        <CardHeader title="Keys" />
        <ApiKeysTable keys={toApiKeyItems(keys.data)} revokeAction={revokeApiKeyAction} />
      </Card>
    </>
  );
}
