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

export async function requireOperatorPage(path: string): Promise<OperatorPrincipal> {
  const p = await getSessionPrincipal();
  if (!p) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  if (p.kind !== "operator") forbidden();
  return p;
}

export async function requireTenantPage(path: string): Promise<TenantPrincipal> {
  const p = await getSessionPrincipal();
  if (!p) redirect(`/login?callbackUrl=${encodeURIComponent(path)}`);
  if (p.kind === "operator") redirect("/admin");
  if (p.kind !== "tenant") forbidden();
  return p;
}

/** A tenant page for the organisation's admins: a member gets the dashboard's 403 page, which says who to ask. */
export async function requireTenantAdminPage(path: string): Promise<TenantPrincipal> {
  const p = await requireTenantPage(path);
  if (p.role !== "tenant_admin") forbidden();
  return p;
}
