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
  /** who the key acts for: a person, or a service account */
  owner: { kind: "user" | "service_account"; name: string };
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  expiresAt: string | null;
}

const scopeTone = { operator: "red", tenant: "indigo", agent: "sky" } as const;

/** When a key stops working: soon (two weeks or less) in amber, past in grey. */
function Expiry({ at }: { at: string | null }) {
  if (!at) return <span className="text-slate-500">never</span>;
  const days = Math.ceil((Date.parse(at) - Date.now()) / 86_400_000);
  if (days <= 0) return <span className="text-slate-500">{formatDateTime(at)}</span>;
  return (
    <span className={days <= 14 ? "font-medium text-amber-700" : undefined} title={formatDateTime(at)}>
      in {days} day{days === 1 ? "" : "s"}
    </span>
  );
}

/** Keys that still work, and the revoked or expired ones (kept for the record). */
export function splitKeys(keys: ApiKeyItem[], now = Date.now()) {
  const inactive = (k: ApiKeyItem) => Boolean(k.revokedAt) || (k.expiresAt !== null && Date.parse(k.expiresAt) <= now);
  return { live: keys.filter((k) => !inactive(k)), inactive: keys.filter(inactive) };
}

export function ApiKeysTable({ keys, revokeAction }: { keys: ApiKeyItem[]; revokeAction: FormAction }) {
  if (keys.length === 0) return <EmptyState title="No API keys">Create one above for scripts, CI or node agents.</EmptyState>;
  return (
    <Table caption="API keys">
      <thead className="bg-slate-50">
        <tr>
          <Th pin="left">Name</Th>
          <Th>Key</Th>
          <Th>Scope</Th>
          <Th>Bound to</Th>
          <Th>Owner</Th>
          <Th>Created</Th>
          <Th>Last used</Th>
          <Th>Expires</Th>
          <Th className="text-right" pin="right">
            Status
          </Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {keys.map((k) => (
          <tr key={k.id} data-testid={`api-key-row-${k.prefix}`}>
            <Td className="font-medium text-slate-900" pin="left">
              {k.name}
            </Td>
            <Td>
              <code className="font-mono text-xs">{k.prefix}…</code>
            </Td>
            <Td>
              <Badge tone={scopeTone[k.scope as keyof typeof scopeTone] ?? "neutral"}>{k.scope}</Badge>
            </Td>
            <Td>{k.boundTo ?? "—"}</Td>
            <Td>
              {k.owner.kind === "service_account" ? (
                <span title={k.createdBy ? `made by ${k.createdBy}` : undefined}>
                  <Badge tone="neutral">service account</Badge> {k.owner.name}
                </span>
              ) : (
                k.owner.name
              )}
            </Td>
            <Td>{formatDateTime(k.createdAt)}</Td>
            <Td>{formatRelative(k.lastUsedAt)}</Td>
            <Td>
              <Expiry at={k.expiresAt} />
            </Td>
            <Td className="text-right" pin="right">
              {k.revokedAt ? (
                <Badge tone="neutral">revoked</Badge>
              ) : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? (
                <Badge tone="neutral">expired</Badge>
              ) : (
                <RevokeKeyButton action={revokeAction} id={k.id} prefix={k.prefix} />
              )}
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
    expiresAt: Date | null;
    tenant?: { name: string } | null;
    cluster?: { name: string } | null;
    createdBy?: { email: string; role: string } | null;
    /** who the key acts for, as the caller may see it (lib/api-keys/queries withOwners) */
    owner: { kind: "user" | "service_account"; name: string };
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
    owner: k.owner,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
    expiresAt: k.expiresAt?.toISOString() ?? null,
  }));
}
