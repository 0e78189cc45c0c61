import Link from "next/link";
import { buttonClass } from "@/components/ui/button";
import { getSessionPrincipal } from "@/lib/auth/session";
import { ROLE_SUMMARIES } from "@/lib/users/roles";
import { tenantAdmins } from "@/lib/users/queries";

export const metadata = { title: "Admins only" };

/**
 * Rendered with HTTP 403 inside the tenant console when a member opens a page for the
 * organisation's admins (users, API keys): what the page is, why not, and who to ask.
 */
export default async function TenantForbidden() {
  const p = await getSessionPrincipal();
  const admins = p?.kind === "tenant" ? await tenantAdmins(p.tenantId) : [];
  return (
    <section className="mx-auto flex max-w-xl flex-col items-center gap-3 py-16 text-center" aria-labelledby="forbidden-title">
      <p className="text-sm font-semibold text-indigo-600">403</p>
      <h1 id="forbidden-title" className="text-2xl font-semibold text-slate-900">This page is for your organisation&apos;s admins</h1>
      <p className="text-slate-600">Users and API keys are managed by admins. {ROLE_SUMMARIES.tenant_member}</p>
      {admins.length ? (
        <div className="mt-2 text-sm text-slate-700">
          <p>Ask an admin:</p>
          <ul className="mt-1 space-y-0.5">{admins.map((a) => <li key={a.email}>{a.name} · <a className="text-indigo-700 hover:underline" href={`mailto:${a.email}`}>{a.email}</a></li>)}</ul>
        </div>
      ) : null}
      <Link href="/dashboard" className={buttonClass("primary", "md", "mt-3")}>Back to your dashboard</Link>
    </section>
  );
}
