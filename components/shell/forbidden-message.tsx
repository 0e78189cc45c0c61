"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { isAdminOnlyTenantPath } from "@/lib/auth/admin-only";
import { ROLE_SUMMARIES } from "@/lib/users/roles";

const button = "mt-2 rounded-md bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-500";

/**
 * What a 403 says, by where it was asked: a member on a page for the organisation's admins (users,
 * API keys), or a tenant user in the operator plane. It reads the path in the browser so the 403
 * page itself stays static (a server-side read would make every page of the site dynamic).
 */
export function ForbiddenMessage() {
  const path = usePathname() ?? "";
  if (isAdminOnlyTenantPath(path)) {
    return (
      <>
        <h1 className="text-2xl font-semibold text-slate-900">This page is for your organisation&apos;s admins</h1>
        <p className="max-w-md text-slate-600">
          Users and API keys are managed by admins; ask one of them (your dashboard lists them). {ROLE_SUMMARIES.tenant_member}
        </p>
        <Link href="/dashboard" className={button}>
          Back to your dashboard
        </Link>
      </>
    );
  }
  return (
    <>
      <h1 className="text-2xl font-semibold text-slate-900">This area is for platform operators</h1>
      <p className="max-w-md text-slate-600">Your account belongs to a tenant. Your work, users and keys are in your dashboard.</p>
      <Link href="/dashboard" className={button}>
        Go to your dashboard
      </Link>
    </>
  );
}
