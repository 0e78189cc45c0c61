import { UserRowActions } from "@/components/forms/user-forms";
import { ResetTwoFactorForm } from "@/components/forms/account-forms";
import type { FormAction } from "@/components/forms/use-action-form";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/card";
import { formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";

export interface UserItem {
  id: string;
  name: string;
  email: string;
  role: string;
  disabled: boolean;
  lastLoginAt: string | null;
  /** two-factor sign-in is on (an admin can reset it when the device is lost) */
  twoFactor?: boolean;
}

const roleLabel: Record<string, string> = { operator: "Operator", tenant_admin: "Admin", tenant_member: "Member" };

export function UsersTable({
  users,
  selfId,
  action,
  resetTwoFactor,
}: {
  users: UserItem[];
  selfId?: string;
  action: FormAction;
  resetTwoFactor?: FormAction;
}) {
  if (users.length === 0) return <EmptyState title="No users yet">Add the first user with the form above.</EmptyState>;
  return (
    <Table caption="Users">
      <thead className="bg-slate-50">
        <tr>
          <Th>Name</Th>
          <Th>Email</Th>
          <Th>Role</Th>
          <Th>Status</Th>
          <Th>Last sign-in</Th>
          <Th className="text-right">Actions</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {users.map((u) => (
          <tr key={u.id}>
            <Td className="font-medium text-slate-900">{u.name}</Td>
            <Td>{u.email}</Td>
            <Td>
              <Badge tone={u.role === "tenant_admin" ? "indigo" : "neutral"}>{roleLabel[u.role] ?? u.role}</Badge>
            </Td>
            <Td>
              {u.disabled ? <Badge tone="red">disabled</Badge> : <Badge tone="green">active</Badge>}
              {u.twoFactor ? (
                <span className="ml-2">
                  <Badge tone="indigo">2FA</Badge>
                </span>
              ) : null}
            </Td>
            <Td>{formatRelative(u.lastLoginAt)}</Td>
            <Td className="text-right">
              <UserRowActions action={action} user={u} isSelf={u.id === selfId} />
              {resetTwoFactor && u.twoFactor && u.id !== selfId ? (
                <div className="mt-1">
                  <ResetTwoFactorForm action={resetTwoFactor} userId={u.id} email={u.email} />
                </div>
              ) : null}
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
