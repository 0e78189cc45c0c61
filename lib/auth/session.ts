import "server-only";
import { getServerSession } from "next-auth";
import { forbidden, redirect } from "next/navigation";
import { principalForUserId } from "@/lib/users/principal-for-user";
import { authOptions } from "./auth-options";
import type { OperatorPrincipal, Principal, TenantPrincipal } from "./principal";

/** The signed-in user's principal for pages and server actions, re-checked against the database. */
export async function getSessionPrincipal(): Promise<Principal | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { id?: string; sv?: number } | undefined;
  if (!user?.id) return null;
  return principalForUserId(user.id, typeof user.sv === "number" ? user.sv : 0);
}

/** `layout`: the plane's layout asks (the page under it decides about enrolment, with its own path). */
export async function requireOperatorPage(path: string, opts: { layout?: boolean } = {}): Promise<OperatorPrincipal> {
  const p = await getSessionPrincipal();
  if (!p) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  if (p.kind !== "operator") forbidden();
  if (!opts.layout) enrolFirst(p, path, "/admin/account");
  return p;
}

export async function requireTenantPage(path: string, opts: { layout?: boolean } = {}): Promise<TenantPrincipal> {
  const p = await getSessionPrincipal();
  if (!p) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  if (p.kind === "operator") redirect("/admin");
  if (p.kind !== "tenant") forbidden();
  if (!opts.layout) enrolFirst(p, path, "/dashboard/account");
  return p;
}

/** A role that must sign in with a second factor and has none yet sees only its account page, where it enrols. */
function enrolFirst(p: OperatorPrincipal | TenantPrincipal, path: string, account: string) {
  if (p.mustEnrolTwoFactor && path !== account) redirect(`${account}?enrol=required`);
}

/** A tenant page for the organisation's admins: a member gets the dashboard's 403 page, which says who to ask. */
export async function requireTenantAdminPage(path: string): Promise<TenantPrincipal> {
  const p = await requireTenantPage(path);
  if (p.role !== "tenant_admin") forbidden();
  return p;
}
