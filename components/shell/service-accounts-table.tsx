import { DisableServiceAccountButton } from "@/components/forms/service-account-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { ServiceAccountJson } from "@/lib/service-accounts/schemas";

const roleLabel = { operator: "operator", tenant_admin: "admin", tenant_member: "member" } as const;

/** Service accounts with their keys in use; disabling one revokes them all. */
export function ServiceAccountsTable({
  accounts,
  tenantNames,
  disableAction,
}: {
  accounts: ServiceAccountJson[];
  /** the operator plane names each account's tenant */
  tenantNames?: Map<string, string>;
  disableAction: FormAction;
}) {
  if (accounts.length === 0)
    return (
      <EmptyState title="No service accounts">
        Keys you make are yours, and stop when your account does. Create a service account above for keys that must outlive any one person
        (CI, a partner&apos;s integration, a fleet&apos;s agents).
      </EmptyState>
    );
  return (
    <Table caption="Service accounts">
      <thead className="bg-slate-50">
        <tr>
          <Th>Name</Th>
          <Th>Role</Th>
          {tenantNames ? <Th>Tenant</Th> : null}
          <Th>Keys in use</Th>
          <Th>Created by</Th>
          <Th>Created</Th>
          <Th className="text-right">Status</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {accounts.map((a) => (
          <tr key={a.id} data-testid={`service-account-row-${a.name}`}>
            <Td className="font-medium text-slate-900">
              {a.name}
              {a.description ? <span className="block text-xs font-normal text-slate-500">{a.description}</span> : null}
            </Td>
            <Td>
              <Badge tone={a.role === "operator" ? "red" : a.role === "tenant_admin" ? "indigo" : "neutral"}>{roleLabel[a.role]}</Badge>
            </Td>
            {tenantNames ? <Td>{a.tenant_id ? (tenantNames.get(a.tenant_id) ?? a.tenant_id.slice(0, 8)) : "platform"}</Td> : null}
            <Td>{a.keys_in_use}</Td>
            <Td>{a.created_by}</Td>
            <Td>{formatDateTime(a.created_at)}</Td>
            <Td className="text-right">
              {a.disabled_at ? (
                <Badge tone="neutral">disabled</Badge>
              ) : (
                <DisableServiceAccountButton action={disableAction} id={a.id} name={a.name} keys={a.keys_in_use} />
              )}
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
