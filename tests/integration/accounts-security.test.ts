import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys } from "@/lib/api-keys/queries";
import { systemActor, type Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { endSessions } from "@/lib/users/end-sessions";
import { principalForUserId } from "@/lib/users/principal-for-user";
import { updateUser } from "@/lib/users/update-user";
import { verifyCredentials } from "@/lib/users/verify-credentials";
import { ACCOUNT_POLICY, ADDRESS_POLICY, PAIR_POLICY } from "@/lib/auth/sign-in-throttle";
import { actorFor, makeTenant, makeUser, operatorPrincipal, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

const userPrincipal = (u: { id: string; email: string; role: string; tenantId: string | null }): Principal =>
  u.role === "operator"
    ? { kind: "operator", userId: u.id, label: u.email }
    : { kind: "tenant", tenantId: u.tenantId!, role: u.role as "tenant_admin", userId: u.id, label: u.email };
let n = Math.floor(Math.random() * 60_000);
// distinct within a run; a random start keeps runs against one database apart
const freshAddress = () => ((n = (n + 1) % 62_500), `198.19.${Math.floor(n / 250)}.${n % 250}`);

describe("keys follow their owners", () => {
  it("disabling an operator revokes the operator key they minted, at once and audited", async () => {
    const leaving = await makeUser("operator");
    const other = await makeUser("operator");
    const { apiKey, key } = await createApiKey(actorFor(userPrincipal(leaving)), { name: unique("exit-key"), scope: "operator" });
    expect(await authenticateApiKey(key)).toMatchObject({ kind: "operator" });
    await updateUser(actorFor(userPrincipal(other)), leaving.id, { disabled: true });
    expect(await codeOf(authenticateApiKey(key))).toBe("unauthorized");
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).revokedAt).not.toBeNull();
    const audit = await db().auditLog.findMany({ where: { targetId: apiKey.id, action: "api_key.revoked" } });
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit[0]!.details)).toContain("was disabled");
    // re-enabling does not bring it back
    await updateUser(actorFor(userPrincipal(other)), leaving.id, { disabled: false });
    expect(await codeOf(authenticateApiKey(key))).toBe("unauthorized");
  });

  it("demoting a tenant admin narrows their keys to member rights; operators list keys by creator", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const boss = await makeUser("tenant_admin", t.id);
    const { apiKey, key } = await createApiKey(actorFor(userPrincipal(admin)), { name: unique("ci"), scope: "tenant" });
    expect(await authenticateApiKey(key)).toMatchObject({ kind: "tenant", role: "tenant_admin" });
    await updateUser(actorFor(userPrincipal(boss)), admin.id, { role: "tenant_member" });
    expect(await authenticateApiKey(key)).toMatchObject({ kind: "tenant", role: "tenant_member" });
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).tenantRole).toBe("tenant_member");
    expect(await db().auditLog.count({ where: { targetId: apiKey.id, action: "api_key.narrowed" } })).toBe(1);
    const byCreator = await listApiKeys(operatorPrincipal, { limit: 50, created_by_user_id: admin.id, include_revoked: "true" });
    expect(byCreator.data.map((k) => k.id)).toEqual([apiKey.id]);
    expect(byCreator.data[0]!.createdBy).toMatchObject({ email: admin.email });
  });

  it("the database does it whatever path changed the user, and refuses keys beyond their creator", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    await makeUser("tenant_admin", t.id);
    const { apiKey } = await createApiKey(actorFor(userPrincipal(admin)), { name: unique("k"), scope: "tenant" });
    await db().$executeRaw`UPDATE users SET disabled_at = now() WHERE id = ${admin.id}::uuid`;
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).revokedAt).not.toBeNull();
    const member = await makeUser("tenant_member", t.id);
    await expect(
      db().$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, tenant_role, created_by_user_id)
                       VALUES ('x', 'gf_abcdefghi', ${"a".repeat(64)}, 'tenant', ${t.id}::uuid, 'tenant_admin', ${member.id}::uuid)`,
    ).rejects.toThrow(/more than its creator/);
    await expect(
      db().$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, tenant_role, created_by_user_id)
                       VALUES ('x', 'gf_abcdefghi', ${"b".repeat(64)}, 'tenant', ${t.id}::uuid, 'tenant_admin', ${admin.id}::uuid)`,
    ).rejects.toThrow(/disabled or gone/);
  });
});

describe("sign-in throttling", () => {
  it("parallel guesses at one account from many places get the account's allowance and one more; its owner's usual place is not held back", async () => {
    const victim = await makeUser("operator");
    const home = freshAddress();
    expect(await verifyCredentials(victim.email, victim.password, home)).toMatchObject({ ok: true });
    const results = await Promise.all(
      Array.from({ length: 60 }, () => verifyCredentials(victim.email, "not-the-password", freshAddress())),
    );
    expect(results.filter((r) => !r.ok && r.reason === "invalid")).toHaveLength(ACCOUNT_POLICY.free + 1);
    expect(results.filter((r) => !r.ok && r.reason === "throttled")).toHaveLength(60 - ACCOUNT_POLICY.free - 1);
    // a new place waits out the account's back-off — a back-off, never a lock (held at its cap
    // here: the hashing above may outlast the first, one-second wait)
    const row = await db().signInThrottle.findUniqueOrThrow({ where: { key: `email:${victim.email}` } });
    expect(row.blockedUntil!.getTime() - Date.now()).toBeLessThanOrEqual(ACCOUNT_POLICY.capMs);
    await db().signInThrottle.update({ where: { key: row.key }, data: { blockedUntil: new Date(Date.now() + ACCOUNT_POLICY.capMs) } });
    expect(await verifyCredentials(victim.email, victim.password, freshAddress())).toMatchObject({ ok: false, reason: "throttled" });
    // where the owner signed in before, the strangers' failures do not count
    expect(await verifyCredentials(victim.email, victim.password, home)).toMatchObject({ ok: true });
    expect(await db().signInThrottle.findUniqueOrThrow({ where: { key: row.key } })).toMatchObject({ failures: 0, blockedUntil: null });
    expect(await verifyCredentials(victim.email, victim.password, freshAddress())).toMatchObject({ ok: true });
  });

  it("one place guessing one account is held back by its own counter, and the account stays open to everyone else", async () => {
    const victim = await makeUser("operator");
    const guesser = freshAddress();
    const results = await Promise.all(Array.from({ length: 15 }, () => verifyCredentials(victim.email, "not-the-password", guesser)));
    expect(results.filter((r) => !r.ok && r.reason === "invalid")).toHaveLength(PAIR_POLICY.free + 1);
    expect(results.filter((r) => !r.ok && r.reason === "throttled")).toHaveLength(15 - PAIR_POLICY.free - 1);
    expect(await verifyCredentials(victim.email, victim.password, guesser)).toMatchObject({ reason: "throttled" });
    expect(await verifyCredentials(victim.email, victim.password, freshAddress())).toMatchObject({ ok: true });
  });

  it("IPv6 addresses are counted by their /64: a guesser cannot reset its counter by rotating the low bits", async () => {
    const prefix = `2001:db8:${(n % 65_000).toString(16)}:${Math.floor(Math.random() * 65_000).toString(16)}`;
    const users = await Promise.all(Array.from({ length: 24 }, () => makeUser("operator")));
    const results = await Promise.all(
      users.map((u, i) => verifyCredentials(u.email, "spray-password-1", `${prefix}::${(i + 1).toString(16)}`)),
    );
    expect(results.filter((r) => !r.ok && r.reason === "invalid")).toHaveLength(ADDRESS_POLICY.free + 1);
    expect(await db().signInThrottle.findUnique({ where: { key: `ip:${prefix}::/64` } })).toMatchObject({
      failures: ADDRESS_POLICY.free + 1,
    });
  });

  it("one address spraying one guess per account is throttled after its allowance", async () => {
    const address = freshAddress();
    const users = await Promise.all(Array.from({ length: 25 }, () => makeUser("operator")));
    const results = await Promise.all(users.map((u) => verifyCredentials(u.email, "spray-password-1", address)));
    expect(results.filter((r) => !r.ok && r.reason === "invalid")).toHaveLength(21);
    expect(results.filter((r) => !r.ok && r.reason === "throttled")).toHaveLength(4);
    // unknown accounts count the same (and cost nothing once throttled); the address's wait is held
    // at its cap here, since the hashing above may outlast the first, one-second wait
    await db().signInThrottle.update({
      where: { key: `ip:${address}` },
      data: { blockedUntil: new Date(Date.now() + ADDRESS_POLICY.capMs) },
    });
    expect(await verifyCredentials(`${unique("nobody")}@example.test`, "x", address)).toMatchObject({ reason: "throttled" });
  });
});

describe("sessions end when their user says so", () => {
  it("a password change, a sign-out or disabling ends every earlier session; your own change needs the current password", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const member = await makeUser("tenant_member", t.id);
    const signedIn = await verifyCredentials(admin.email, admin.password, freshAddress());
    if (!signedIn.ok) throw new Error("sign-in failed");
    const v0 = signedIn.user.sessionVersion;
    expect(await principalForUserId(admin.id, v0)).not.toBeNull();

    const self = actorFor(userPrincipal(admin));
    expect(await codeOf(updateUser(self, admin.id, { password: "a-brand-new-password" }))).toBe("validation_failed");
    expect(await codeOf(updateUser(self, admin.id, { password: "a-brand-new-password", current_password: "wrong-one-entirely" }))).toBe(
      "validation_failed",
    );
    await updateUser(self, admin.id, { password: "a-brand-new-password", current_password: admin.password });
    expect(await principalForUserId(admin.id, v0)).toBeNull();
    expect(await principalForUserId(admin.id, v0 + 1)).not.toBeNull();

    await endSessions(admin.id, v0 + 1);
    await endSessions(admin.id, v0 + 1); // a second tab signing out changes nothing more
    expect(await principalForUserId(admin.id, v0 + 1)).toBeNull();
    expect(await principalForUserId(admin.id, v0 + 2)).not.toBeNull();

    // an admin resetting someone else's password, or disabling them, ends their sessions too
    expect(await principalForUserId(member.id, 0)).not.toBeNull();
    await updateUser(self, member.id, { password: "reset-by-the-admin" });
    expect(await principalForUserId(member.id, 0)).toBeNull();
    await updateUser(self, member.id, { disabled: true });
    expect(await principalForUserId(member.id, 1)).toBeNull();
    expect(systemActor.principal.kind).toBe("operator");
  });
});
