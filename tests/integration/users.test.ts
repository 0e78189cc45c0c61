import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { createUser } from "@/lib/users/create-user";
import { principalForUserId } from "@/lib/users/principal-for-user";
import { updateUser } from "@/lib/users/update-user";
import { verifyCredentials } from "@/lib/users/verify-credentials";
import { actorFor, makeTenant, makeUser, tenantAdminPrincipal, tenantMemberPrincipal, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

/** a fresh address per attempt: these tests are about credentials, not throttling */
const addr = () => `198.18.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}`;

describe("users", () => {
  it("stores a slow hash, never the password, and signs the user in", async () => {
    const t = await makeTenant();
    const u = await makeUser("tenant_admin", t.id, "correct horse battery");
    const row = await db().user.findUniqueOrThrow({ where: { id: u.id } });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordHash).not.toContain("correct horse");
    const ok = await verifyCredentials(u.email.toUpperCase(), "correct horse battery", addr());
    expect(ok).toMatchObject({ ok: true, user: { id: u.id, role: "tenant_admin", tenantId: t.id } });
    expect(await verifyCredentials(u.email, "wrong password!!", addr())).toEqual({ ok: false, reason: "invalid" });
    expect(await verifyCredentials("nobody@example.test", "whatever-password", addr())).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses sign-in and sessions for disabled users and suspended tenants", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const member = await makeUser("tenant_member", t.id);
    await updateUser(actorFor(tenantAdminPrincipal(t.id, admin.id)), member.id, { disabled: true });
    expect(await verifyCredentials(member.email, member.password, addr())).toEqual({ ok: false, reason: "disabled" });
    expect(await principalForUserId(member.id, 1)).toBeNull();
    await updateTenant(systemActor, t.id, { status: "suspended" });
    expect(await verifyCredentials(admin.email, admin.password, addr())).toEqual({ ok: false, reason: "disabled" });
    expect(await principalForUserId(admin.id, 0)).toBeNull();
  });

  it("treats emails case-insensitively and uniquely", async () => {
    const t = await makeTenant();
    const email = `${unique("Case")}@Example.Test`;
    await createUser(systemActor, {
      email: email.toLowerCase(),
      name: "a",
      password: "long-enough-pass",
      role: "tenant_member",
      tenant_id: t.id,
    });
    const err = await createUser(systemActor, {
      email: email.toLowerCase(),
      name: "b",
      password: "long-enough-pass",
      role: "tenant_member",
      tenant_id: t.id,
    }).catch((e) => e);
    expect(err.code).toBe("conflict");
    expect(err.details[0].path).toBe("email");
  });

  it("tenant admins manage only their own tenant's users and never create operators", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const asA = actorFor(tenantAdminPrincipal(a.id));
    const created = await createUser(asA, {
      email: `${unique("m")}@a.test`,
      name: "m",
      password: "long-enough-pass",
      role: "tenant_member",
    });
    expect(created.tenantId).toBe(a.id);
    expect(
      await codeOf(
        createUser(asA, {
          email: `${unique("x")}@a.test`,
          name: "x",
          password: "long-enough-pass",
          role: "tenant_member",
          tenant_id: b.id,
        }),
      ),
    ).toBe("forbidden");
    expect(
      await codeOf(createUser(asA, { email: `${unique("o")}@a.test`, name: "o", password: "long-enough-pass", role: "operator" })),
    ).toBe("forbidden");
    const inB = await makeUser("tenant_member", b.id);
    expect(await codeOf(updateUser(asA, inB.id, { disabled: true }))).toBe("not_found");
    expect(
      await codeOf(
        createUser(actorFor(tenantMemberPrincipal(a.id)), {
          email: `${unique("y")}@a.test`,
          name: "y",
          password: "long-enough-pass",
          role: "tenant_member",
        }),
      ),
    ).toBe("forbidden");
  });

  it("keeps at least one enabled admin even when two admins demote each other at once", async () => {
    const t = await makeTenant();
    const x = await makeUser("tenant_admin", t.id);
    const y = await makeUser("tenant_admin", t.id);
    const results = await Promise.allSettled([
      updateUser(actorFor(tenantAdminPrincipal(t.id, x.id)), y.id, { role: "tenant_member" }),
      updateUser(actorFor(tenantAdminPrincipal(t.id, y.id)), x.id, { role: "tenant_member" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db().user.count({ where: { tenantId: t.id, role: "tenant_admin", disabledAt: null } })).toBe(1);
  });

  it("nobody disables themselves or changes their own role", async () => {
    const t = await makeTenant();
    const x = await makeUser("tenant_admin", t.id);
    await makeUser("tenant_admin", t.id);
    const asX = actorFor(tenantAdminPrincipal(t.id, x.id));
    expect(await codeOf(updateUser(asX, x.id, { disabled: true }))).toBe("forbidden");
    expect(await codeOf(updateUser(asX, x.id, { role: "tenant_member" }))).toBe("forbidden");
    expect(await codeOf(updateUser(asX, x.id, { name: "New name" }))).toBe("ok");
  });

  it("the database refuses an operator bound to a tenant, or a tenant user without one", async () => {
    const t = await makeTenant();
    await expect(
      db()
        .$executeRaw`INSERT INTO users (email, name, password_hash, role, tenant_id) VALUES (${unique("o") + "@x.test"}, 'o', 'h', 'operator', ${t.id}::uuid)`,
    ).rejects.toThrow(/users_role_tenant_check/);
    await expect(
      db().$executeRaw`INSERT INTO users (email, name, password_hash, role) VALUES (${unique("m") + "@x.test"}, 'm', 'h', 'tenant_member')`,
    ).rejects.toThrow(/users_role_tenant_check/);
  });
});
