import { Prisma } from "@/lib/generated/prisma/client";
import { forbidden } from "@/lib/errors";
import type { Principal } from "./principal";

// Tenancy in the query, not after the fetch: the one way every read and every locked write limits
// rows to what the caller may see. Operators see every tenant's rows, a tenant its own; agents and
// workloads see no tenant data through these paths at all. A row of another tenant is then simply
// not found (404), exactly like a row that does not exist, and never leaves the database.

/** The scope as a Prisma `where` fragment: `{}` for operators, `{ tenantId }` for a tenant. */
export function tenantScope(
  p: Principal,
  refusal = "Tenant data is for operators and tenants, not agent or workload credentials",
): { tenantId?: string } {
  if (p.kind === "operator") return {};
  if (p.kind === "tenant") return { tenantId: p.tenantId };
  throw forbidden(refusal);
}

/** The scope as a statement parameter: the caller's tenant, or null for operators (`$n IS NULL OR tenant_id = $n`). */
export function scopedTenantId(p: Principal): string | null {
  return tenantScope(p).tenantId ?? null;
}

/**
 * The scope as a condition on `column` (a trusted identifier such as `"tenant_id"` or
 * `"p.tenant_id"`, never input) for Prisma's tagged raw queries: `TRUE` for operators,
 * `column = $tenant` for a tenant.
 */
export function tenantScopeSql(p: Principal, column: string): Prisma.Sql {
  if (!/^([a-z_]+\.)?[a-z_]+$/.test(column)) throw new Error(`tenantScopeSql: ${column} is not a column name`);
  const { tenantId } = tenantScope(p);
  return tenantId === undefined ? Prisma.sql`TRUE` : Prisma.sql`${Prisma.raw(column)} = ${tenantId}::uuid`;
}
