import { RevokeKeyButton } from "@/components/forms/api-key-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";

export interface ApiKeyItem {
  id: string;
  name: string;
  prefix: string;
  scope: string;
  boundTo: string | null;
  createdBy: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const scopeTone = { operator: "red", tenant: "indigo", agent: "sky" } as const;

export function ApiKeysTable({ keys, revokeAction }: { keys: ApiKeyItem[]; revokeAction: FormAction }) {
  if (keys.length === 0) return <EmptyState title="No API keys">Create one above for scripts, CI or node agents.</EmptyState>;
  return (
    <Table caption="API keys">
      <thead className="bg-slate-50">
        <tr><Th>Name</Th><Th>Key</Th><Th>Scope</Th><Th>Bound to</Th><Th>Created by</Th><Th>Created</Th><Th>Last used</Th><Th className="text-right">Status</Th></tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {keys.map((k) => (
          <tr key={k.id} data-testid={`api-key-row-${k.prefix}`}>
            <Td className="font-medium text-slate-900">{k.name}</Td>
            <Td><code className="font-mono text-xs">{k.prefix}…</code></Td>
            <Td><Badge tone={scopeTone[k.scope as keyof typeof scopeTone] ?? "neutral"}>{k.scope}</Badge></Td>
            <Td>{k.boundTo ?? "—"}</Td>
            <Td>{k.createdBy ?? "platform"}</Td>
            <Td>{formatDateTime(k.createdAt)}</Td>
            <Td>{formatRelative(k.lastUsedAt)}</Td>
            <Td className="text-right">
              {k.revokedAt ? <Badge tone="neutral">revoked</Badge> : <RevokeKeyButton action={revokeAction} id={k.id} prefix={k.prefix} />}
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

export function toApiKeyItems(
  rows: Array<{
    id: string;
    name: string;
    prefix: string;
    scope: string;
    createdAt: Date;
    lastUsedAt: Date | null;
    revokedAt: Date | null;
    tenant?: { name: string } | null;
    cluster?: { name: string } | null;
    createdBy?: { email: string; role: string } | null;
  }>,
  /** a tenant's plane names its own people only */
  forTenant = false,
): ApiKeyItem[] {
  return rows.map((k) => ({
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scope: k.scope,
    boundTo: k.tenant?.name ?? k.cluster?.name ?? null,
    createdBy: k.createdBy ? (forTenant && k.createdBy.role === "operator" ? "GPUForge operations" : k.createdBy.email) : null,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  }));
}
