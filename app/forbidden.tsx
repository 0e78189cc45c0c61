import { headers } from "next/headers";
import Link from "next/link";
import { isAdminOnlyTenantPath, PATH_HEADER } from "@/lib/auth/admin-only";
import { getSessionPrincipal } from "@/lib/auth/session";
import { tenantAdmins } from "@/lib/users/queries";
import { ROLE_SUMMARIES } from "@/lib/users/roles";

export const metadata = { title: "Not allowed" };

const button = "mt-2 rounded-md bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-500";

/**
 * Rendered by forbidden() with HTTP 403: a tenant user in the operator plane, or a member on a page
 * for the organisation's admins (users, API keys) — each told what the page is, why not, and where
 * to go (a member also who to ask).
 */
export default async function Forbidden() {
  const [p, h] = await Promise.all([getSessionPrincipal(), headers()]);
  if (p?.kind === "tenant" && p.role === "tenant_member" && isAdminOnlyTenantPath(h.get(PATH_HEADER) ?? "")) {
    const admins = await tenantAdmins(p.tenantId);
    return (
      <main className="flex min-h-screen flex-col items-center justify-center gap-3 px-6 text-center">
        <p className="text-sm font-semibold text-indigo-600">403</p>
        <h1 className="text-2xl font-semibold text-slate-900">This page is for your organisation&apos;s admins</h1>
        <p className="max-w-md text-slate-600">Users and API keys are managed by admins. {ROLE_SUMMARIES.tenant_member}</p>
        {admins.length ? (
          <div className="text-sm text-slate-700">
            <p>Ask an admin:</p>
            <ul className="mt-1 space-y-0.5">{admins.map((a) => <li key={a.email}>{a.name} · <a className="text-indigo-700 hover:underline" href={`mailto:${a.email}`}>{a.email}</a></li>)}</ul>
          </div>
        ) : null}
        <Link href="/dashboard" className={button}>Back to your dashboard</Link>
      </main>
    );
  }
  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-3 px-6 text-center">
      <p className="text-sm font-semibold text-indigo-600">403</p>
      <h1 className="text-2xl font-semibold text-slate-900">This area is for platform operators</h1>
      <p className="max-w-md text-slate-600">Your account belongs to a tenant. Your work, users and keys are in your dashboard.</p>
      <Link href="/dashboard" className={button}>Go to your dashboard</Link>
    </main>
  );
}
