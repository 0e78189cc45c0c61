import "server-only";
import { assertTenantAdminOrOperator, type Actor } from "@/lib/auth/principal";
import { hashPassword } from "@/lib/auth/password";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { conflict, forbidden, notFound, validationFailed } from "@/lib/errors";
import { userSelect, type UpdateUserInput } from "./schemas";

/**
 * Rename, change role, disable / re-enable or reset the password of a user. Nobody can lock
 * themselves out, and a tenant always keeps at least one enabled admin (checked under a row lock
 * on the tenant so two admins demoting each other at once cannot both succeed).
 */
export async function updateUser(actor: Actor, id: string, input: UpdateUserInput) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  const isSelf = "userId" in p && p.userId === id;
  if (isSelf && (input.disabled === true || (input.role && input.role !== (p.kind === "operator" ? "operator" : p.role)))) {
    throw forbidden("You cannot disable yourself or change your own role");
  }
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;

  return db().$transaction(async (tx) => {
    const before = await tx.user.findFirst({
      where: { id, ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}) },
      select: userSelect,
    });
    if (!before) throw notFound("User");
    if (input.role) {
      const wasOperator = before.role === "operator";
      if (wasOperator !== (input.role === "operator")) {
        throw validationFailed([{ path: "role", message: "Operators and tenant users cannot switch sides" }]);
      }
    }
    if (before.tenantId) {
      await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${before.tenantId}::uuid FOR UPDATE`;
      const losesAdmin =
        before.role === "tenant_admin" &&
        before.disabledAt === null &&
        ((input.role && input.role !== "tenant_admin") || input.disabled === true);
      if (losesAdmin) {
        const admins = await tx.user.count({
          where: { tenantId: before.tenantId, role: "tenant_admin", disabledAt: null },
        });
        if (admins <= 1) throw conflict("A tenant must keep at least one enabled admin");
      }
    }
    const user = await tx.user.update({
      where: { id },
      data: {
        name: input.name,
        role: input.role,
        passwordHash,
        disabledAt: input.disabled === undefined ? undefined : input.disabled ? (before.disabledAt ?? new Date()) : null,
      },
      select: userSelect,
    });
    const { password: _omit, ...visible } = input;
    await recordAudit(tx, actor, {
      action: input.disabled === true ? "user.disabled" : "user.updated",
      targetType: "user",
      targetId: id,
      tenantId: before.tenantId,
      details: { changes: { ...visible, ...(passwordHash ? { password: "reset" } : {}) } },
    });
    return user;
  });
}
