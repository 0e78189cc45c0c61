import { redirect } from "next/navigation";
import { createApiKeyAction, revokeApiKeyAction } from "@/app/_actions/api-keys";
import { CreateApiKeyForm } from "@/components/forms/api-key-forms";
import { ApiKeysTable, toApiKeyItems } from "@/components/shell/api-keys-table";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listApiKeys } from "@/lib/api-keys/queries";
import { requireTenantPage } from "@/lib/auth/session";

export const metadata = { title: "API keys" };

export default async function TenantApiKeysPage() {
  const p = await requireTenantPage("/dashboard/api-keys");
  if (p.role !== "tenant_admin") redirect("/dashboard");
  const keys = await listApiKeys(p, { limit: 500, include_revoked: "true" });
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
        <CardHeader title="Keys" />
        <ApiKeysTable keys={toApiKeyItems(keys.data, true)} revokeAction={revokeApiKeyAction} />
      </Card>
    </>
  );
}
