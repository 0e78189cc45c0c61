/** The request header the proxy sets to the path, for layouts (which Next.js does not give the path). */
export const PATH_HEADER = "x-gf-path";

/** Tenant pages for the organisation's admins: members are answered 403 with who to ask. */
const ADMIN_ONLY_TENANT_PATHS = ["/dashboard/users", "/dashboard/api-keys"];

export function isAdminOnlyTenantPath(path: string): boolean {
  return ADMIN_ONLY_TENANT_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
}
