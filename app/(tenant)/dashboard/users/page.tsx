import { createUserAction, updateUserAction } from "@/app/_actions/users";
import { CreateUserForm } from "@/components/forms/user-forms";
import { UsersTable } from "@/components/shell/users-table";
import { resetTwoFactorAction } from "@/app/_actions/accounts";
import { Card, CardHeader, PageHeader } from "@/components/ui/card";
import { listUsers } from "@/lib/users/queries";
import { ROLE_SUMMARIES } from "@/lib/users/roles";
import { page } from "@/lib/pages/page";

export const metadata = { title: "Users" };

export default page({ plane: "tenant_admin", path: "/dashboard/users" }, async ({ principal: p }) => {
  const users = await listUsers(p, { limit: 500 });
  return (
    <>
      <PageHeader title="Users" description="People in your organisation who can sign in." />
      <Card className="mb-6">
        <CardHeader title="Roles" />
        <dl className="grid gap-4 p-5 text-sm sm:grid-cols-2">
          <div>
            <dt className="font-medium text-slate-900">Member</dt>
            <dd className="mt-1 text-slate-600">{ROLE_SUMMARIES.tenant_member}</dd>
          </div>
          <div>
            <dt className="font-medium text-slate-900">Admin</dt>
            <dd className="mt-1 text-slate-600">Everything a member can do. {ROLE_SUMMARIES.tenant_admin}</dd>
          </div>
        </dl>
      </Card>
      <Card className="mb-6">
        <CardHeader title="Add a user" />
        <CreateUserForm action={createUserAction} />
      </Card>
      <Card>
        <CardHeader title={`Users (${users.data.length})`} />
        <UsersTable
          action={updateUserAction}
          selfId={p.userId}
          users={users.data.map((u) => ({
            id: u.id,
            name: u.name,
            email: u.email,
            role: u.role,
            disabled: u.disabledAt !== null,
            lastLoginAt: u.lastLoginAt?.toISOString() ?? null,
            twoFactor: u.totpEnabledAt !== null,
          }))}
          resetTwoFactor={resetTwoFactorAction}
        />
      </Card>
    </>
  );
});
