import "server-only";
import { assertTenantAdminOrOperator, type Actor } from "@/lib/auth/principal";
import { hashPassword, verifyPassword } from "@/lib/auth/password";
import { assertAcceptablePassword } from "@/lib/accounts/check-password";
import { forgetRememberedKeys } from "@/lib/api-keys/authenticate-api-key";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { conflict, forbidden, notFound, validationFailed } from "@/lib/errors";
import { LOCK_TENANT } from "@/lib/tenants/statements";
import { userSelect, type UpdateUserInput } from "./schemas";

/**
 * Rename, change role, disable / re-enable or reset the password of a user. Nobody can lock
 * themselves out, and a tenant always keeps at least one enabled admin (checked under a row lock
 * on the tenant so two admins demoting each other at once cannot both succeed).
 *
 * Access follows the change at once: a new password, a lower role or disabling ends the user's
 * sessions (their session version moves on), and the API keys they created are revoked (disabled)
 * or narrowed to member rights (demoted) by the database in the same transaction — each audited.
 * Changing your own password needs the current one.
 */
export async function updateUser(actor: Actor, id: string, input: UpdateUserInput) {
  const p = actor.principal;
  assertTenantAdminOrOperator(p);
  const isSelf = "userId" in p && p.userId === id;
  if (isSelf && (input.disabled === true || (input.role && input.role !== (p.kind === "operator" ? "operator" : p.role)))) {
    throw forbidden("You cannot disable yourself or change your own role");
  }
  if (isSelf && input.password) {
    const current = await db().user.findUnique({ where: { id }, select: { passwordHash: true } });
    if (!input.current_password || !(await verifyPassword(current?.passwordHash ?? null, input.current_password))) {
      throw validationFailed([{ path: "current_password", message: "Enter your current password to change it" }]);
    }
  }
  if (input.password) await assertAcceptablePassword(input.password);
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;

  const { user, revoked } = await db().$transaction(async (tx) => {
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
      await run(tx, LOCK_TENANT, [before.tenantId]);

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
    const disabling = input.disabled === true && before.disabledAt === null;
    const demoting = input.role === "tenant_member" && before.role === "tenant_admin";
    const keysBefore =
      disabling || demoting
        ? await tx.apiKey.findMany({
            // every key the user owns: made by them, or with one of their keys
            where: { ownerUserId: id, revokedAt: null },
            select: { id: true, name: true, prefix: true, scope: true, tenantId: true, tenantRole: true },
          })
        : [];
    const user = await tx.user.update({
      where: { id },
      data: {
        name: input.name,
        role: input.role,
        passwordHash,
        disabledAt: input.disabled === undefined ? undefined : input.disabled ? (before.disabledAt ?? new Date()) : null,
        ...(passwordHash || disabling || demoting ? { sessionVersion: { increment: 1 } } : {}),
      },
      select: userSelect,
    });
    // the users trigger has revoked (disabled) or narrowed (demoted) these keys in this transaction
    for (const k of keysBefore) {
      if (!disabling && (k.scope !== "tenant" || k.tenantRole === "tenant_member")) continue;
      await recordAudit(tx, actor, {
        action: disabling ? "api_key.revoked" : "api_key.narrowed",
        targetType: "api_key",
        targetId: k.id,
        tenantId: k.tenantId,
        details: {
          name: k.name,
          prefix: k.prefix,
          scope: k.scope,
          reason: disabling ? `its owner ${before.email} was disabled` : `its owner ${before.email} is now a tenant member`,
          ...(disabling ? {} : { tenant_role: "tenant_member" }),
        },
      });
    }
    const { password: _omit, current_password: _omitCurrent, ...visible } = input;
    await recordAudit(tx, actor, {
      action: input.disabled === true ? "user.disabled" : "user.updated",
      targetType: "user",
      targetId: id,
      tenantId: before.tenantId,
      details: {
        changes: { ...visible, ...(passwordHash ? { password: "reset" } : {}) },
        ...(passwordHash || disabling || demoting ? { sessions_ended: true } : {}),
      },
    });
    return { user, revoked: disabling ? keysBefore.length : 0 };
  });
  if (revoked > 0) forgetRememberedKeys();
  return user;
}
