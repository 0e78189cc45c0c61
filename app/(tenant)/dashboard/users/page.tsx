import { redirect } from "next/navigation";
import { createUserAction, updateUserAction } from "@/app/_actions/users";
import { CreateUserForm } from "@/components/forms/user-forms";
import { UsersTable } from "@/components/shell/users-table";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { requireTenantPage } from "@/lib/auth/session";
import { listUsers } from "@/lib/users/queries";

export const metadata = { title: "Users" };

export default async function TenantUsersPage() {
  const p = await requireTenantPage("/dashboard/users");
  if (p.role !== "tenant_admin") redirect("/dashboard");
  const users = await listUsers(p, { limit: 500 });
  return (
    <>
      <PageHeader title="Users" description="People in your organisation who can sign in. Admins also manage users and API keys." />
      <Card className="mb-6">
        <CardHeader title="Add a user" />
        <CreateUserForm action={createUserAction} />
      </Card>
      <Card>
        <CardHeader title={`Users (${users.data.length})`} />
        <UsersTable
          action={updateUserAction}
          selfId={p.userId}
          users={users.data.map((u) => ({ id: u.id, name: u.name, email: u.email, role: u.role, disabled: u.disabledAt !== null, lastLoginAt: u.lastLoginAt?.toISOString() ?? null }))}
        />
      </Card>
    </>
  );
}
