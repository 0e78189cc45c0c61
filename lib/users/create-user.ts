import "server-only";
import { assertTenantAdminOrOperator, type Actor } from "@/lib/auth/principal";
import { hashPassword } from "@/lib/auth/password";
import { assertAcceptablePassword } from "@/lib/accounts/check-password";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { forbidden, uniqueViolationToConflict, validationFailed } from "@/lib/errors";
import { userSelect, type CreateUserInput } from "./schemas";

/**
 * Operators create operators and users of any tenant; tenant admins create users of their own
 * tenant only (tenant_id defaults to theirs and may not name another).
 */
export async function createUser(actor: Actor, input: CreateUserInput) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  let tenantId: string | null;
  if (p.kind === "tenant") {
    if (input.role === "operator") throw forbidden("Tenant admins cannot create operators");
    if (input.tenant_id && input.tenant_id !== p.tenantId) throw forbidden("Users can only be added to your own tenant");
    tenantId = p.tenantId;
  } else if (input.role === "operator") {
    if (input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Operators belong to no tenant" }]);
    tenantId = null;
  } else {
    if (!input.tenant_id) throw validationFailed([{ path: "tenant_id", message: "Required for tenant roles" }]);
    const exists = await db().tenant.count({ where: { id: input.tenant_id } });
    if (!exists) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    tenantId = input.tenant_id;
  }

  await assertAcceptablePassword(input.password, { email: input.email });
  const passwordHash = await hashPassword(input.password);
  try {
    return await db().$transaction(async (tx) => {
      const user = await tx.user.create({
        data: { email: input.email, name: input.name, role: input.role, tenantId, passwordHash },
        select: userSelect,
      });
      await recordAudit(tx, actor, {
        action: "user.created",
        targetType: "user",
        targetId: user.id,
        tenantId,
        details: { email: user.email, role: user.role },
      });
      return user;
    });
  } catch (e) {
    return uniqueViolationToConflict(e, "email", "A user with this email already exists");
  }
}
