import { describe, expect, it } from "vitest";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { listApiKeys } from "@/lib/api-keys/queries";
import { systemActor, systemActorFor, type Principal } from "@/lib/auth/principal";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { createEndpointKey } from "@/lib/endpoints/endpoint-keys";
import { authenticateGatewayCaller } from "@/lib/gateway/gateway-keys";
import { createServiceAccount, disableServiceAccount, listServiceAccounts } from "@/lib/service-accounts/service-accounts";
import { db } from "@/lib/db/client";
import { endSessions } from "@/lib/users/end-sessions";
import { principalForUserId } from "@/lib/users/principal-for-user";
import { updateUser } from "@/lib/users/update-user";
import { verifyCredentials } from "@/lib/users/verify-credentials";
import { ACCOUNT_POLICY, ADDRESS_POLICY, PAIR_POLICY } from "@/lib/auth/sign-in-throttle";
import { actorFor, makeCluster, makeTenant, makeUser, operatorPrincipal, tenantAdminPrincipal, unique } from "../support/fixtures";
import { codeAndFieldOf, codeOf } from "../support/outcomes";

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

  it("the database does it whatever path changed the user, and refuses keys beyond their owner", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    await makeUser("tenant_admin", t.id);
    const { apiKey } = await createApiKey(actorFor(userPrincipal(admin)), { name: unique("k"), scope: "tenant" });
    await db().$executeRaw`UPDATE users SET disabled_at = now() WHERE id = ${admin.id}::uuid`;
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).revokedAt).not.toBeNull();
    const member = await makeUser("tenant_member", t.id);
    await expect(
      db().$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, tenant_role, owner_user_id)
                       VALUES ('x', 'gf_abcdefghi', ${"a".repeat(64)}, 'tenant', ${t.id}::uuid, 'tenant_admin', ${member.id}::uuid)`,
    ).rejects.toThrow(/more than its owner/);
    await expect(
      db().$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, tenant_role, owner_user_id)
                       VALUES ('x', 'gf_abcdefghi', ${"b".repeat(64)}, 'tenant', ${t.id}::uuid, 'tenant_admin', ${admin.id}::uuid)`,
    ).rejects.toThrow(/disabled or gone/);
  });
});

describe("every key has an owner (issue 27)", () => {
  const insertKey = (o: {
    hash: string;
    tenant: string;
    role?: string;
    user?: string | null;
    account?: string | null;
    created?: string | null;
  }) =>
    db()
      .$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, tenant_role, owner_user_id, service_account_id, created_by_user_id)
                     VALUES ('x', 'gf_abcdefghi', ${o.hash}, 'tenant', ${o.tenant}::uuid, ${o.role ?? "tenant_admin"},
                             ${o.user ?? null}::uuid, ${o.account ?? null}::uuid, ${o.created ?? null}::uuid)`;

  it("a key made with a key belongs to that key's owner: disabling the person revokes both, and its endpoint keys", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const other = await makeUser("tenant_admin", t.id);
    const first = await createApiKey(actorFor(userPrincipal(admin)), { name: unique("ci"), scope: "tenant" });
    // a script holding the admin's key mints another one, and an endpoint key, with it
    const asKey = actorFor(await authenticateApiKey(first.key));
    const second = await createApiKey(asKey, { name: unique("minted"), scope: "tenant" });
    expect(second.apiKey).toMatchObject({ ownerUserId: admin.id, serviceAccountId: null });
    const asT = actorFor(tenantAdminPrincipal(t.id, other.id));
    const ep = await createEndpoint(asT, {
      name: unique("ep"),
      model: "m",
      gpu_type: "NOPE",
      gpus_per_replica: 1,
      replicas: 0,
      autoscale_metric: "none",
      cooldown_s: 300,
    }).catch(() => null);
    const endpointKey = ep ? await createEndpointKey(asKey, ep.id, { name: unique("app") }) : null;
    if (endpointKey) expect(endpointKey.endpointKey.owner).toMatchObject({ kind: "user", id: admin.id });
    const third = await createApiKey(actorFor(await authenticateApiKey(second.key)), { name: unique("again"), scope: "tenant" });
    expect(third.apiKey.ownerUserId).toBe(admin.id);
    await updateUser(actorFor(userPrincipal(other)), admin.id, { disabled: true });
    for (const k of [first.key, second.key, third.key]) expect(await codeOf(authenticateApiKey(k))).toBe("unauthorized");
    if (endpointKey) {
      expect((await db().endpointKey.findUniqueOrThrow({ where: { id: endpointKey.endpointKey.id } })).revokedAt).not.toBeNull();
      expect(await codeOf(authenticateGatewayCaller(`Bearer ${endpointKey.key}`))).toBe("unauthorized");
    }
    // each revocation is audited, naming why
    expect(await db().auditLog.count({ where: { targetId: second.apiKey.id, action: "api_key.revoked" } })).toBe(1);
  });

  it("a key made with a key keeps its owner's role cap: demoting the person narrows every key they own", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const boss = await makeUser("tenant_admin", t.id);
    const first = await createApiKey(actorFor(userPrincipal(admin)), { name: unique("ci"), scope: "tenant" });
    const second = await createApiKey(actorFor(await authenticateApiKey(first.key)), { name: unique("minted"), scope: "tenant" });
    await updateUser(actorFor(userPrincipal(boss)), admin.id, { role: "tenant_member" });
    expect(await authenticateApiKey(second.key)).toMatchObject({ kind: "tenant", role: "tenant_member" });
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: second.apiKey.id } })).tenantRole).toBe("tenant_member");
    // a member's key cannot mint keys at all
    expect(await codeOf(createApiKey(actorFor(await authenticateApiKey(second.key)), { name: unique("x"), scope: "tenant" }))).toBe(
      "forbidden",
    );
  });

  it("a service account's keys outlive the person who made them, carry its role, and die with it", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const boss = await makeUser("tenant_admin", t.id);
    const asAdmin = actorFor(userPrincipal(admin));
    const ci = await createServiceAccount(asAdmin, { name: unique("ci-deployer"), role: "tenant_admin" });
    const readers = await createServiceAccount(asAdmin, { name: unique("dashboards"), role: "tenant_member" });
    const key = await createApiKey(asAdmin, { name: unique("deploy"), scope: "tenant", service_account_id: ci.id });
    const readKey = await createApiKey(asAdmin, { name: unique("read"), scope: "tenant", service_account_id: readers.id });
    expect(key.apiKey).toMatchObject({ serviceAccountId: ci.id, ownerUserId: null, tenantRole: "tenant_admin" });
    expect(readKey.apiKey.tenantRole).toBe("tenant_member");
    expect(await authenticateApiKey(readKey.key)).toMatchObject({ role: "tenant_member" });
    // the person who made it leaves: the account's keys go on
    await updateUser(actorFor(userPrincipal(boss)), admin.id, { disabled: true });
    expect(await authenticateApiKey(key.key)).toMatchObject({ kind: "tenant", tenantId: t.id, role: "tenant_admin" });
    // a key made with the account's key is the account's too
    const minted = await createApiKey(actorFor(await authenticateApiKey(key.key)), { name: unique("sub"), scope: "tenant" });
    expect(minted.apiKey.serviceAccountId).toBe(ci.id);
    const listed = await listServiceAccounts(tenantAdminPrincipal(t.id, boss.id));
    expect(listed.find((a) => a.id === ci.id)).toMatchObject({ keys_in_use: 2, role: "tenant_admin", created_by: admin.email });
    // disabled: every key it owns stops at once, audited
    await disableServiceAccount(actorFor(userPrincipal(boss)), ci.id);
    for (const k of [key.key, minted.key]) expect(await codeOf(authenticateApiKey(k))).toBe("unauthorized");
    expect(await db().auditLog.count({ where: { targetId: ci.id, action: "service_account.disabled" } })).toBe(1);
    expect(
      await codeAndFieldOf(
        createApiKey(actorFor(userPrincipal(boss)), { name: unique("late"), scope: "tenant", service_account_id: ci.id }),
      ),
    ).toBe("validation_failed:service_account_id");
    // the database keeps it so, whatever path is taken
    await expect(db().$executeRaw`UPDATE service_accounts SET disabled_at = NULL WHERE id = ${ci.id}::uuid`).rejects.toThrow(
      /stays disabled/,
    );
    await expect(insertKey({ hash: "c".repeat(64), tenant: t.id, account: ci.id })).rejects.toThrow(/disabled or gone/);
    await expect(insertKey({ hash: "d".repeat(64), tenant: t.id, account: readers.id })).rejects.toThrow(/more than its owner/);
  });

  it("another tenant's service account does not exist for a tenant admin, and a tenant's account owns tenant keys only", async () => {
    const [t, u] = [await makeTenant(), await makeTenant()];
    const adminT = await makeUser("tenant_admin", t.id);
    const adminU = await makeUser("tenant_admin", u.id);
    const mine = await createServiceAccount(actorFor(userPrincipal(adminT)), { name: unique("mine"), role: "tenant_admin" });
    const asU = actorFor(userPrincipal(adminU));
    expect(await codeAndFieldOf(createApiKey(asU, { name: unique("steal"), scope: "tenant", service_account_id: mine.id }))).toBe(
      "validation_failed:service_account_id",
    );
    expect(await codeOf(disableServiceAccount(asU, mine.id))).toBe("not_found");
    expect((await listServiceAccounts(tenantAdminPrincipal(u.id, adminU.id))).some((a) => a.id === mine.id)).toBe(false);
    expect(await codeAndFieldOf(createServiceAccount(asU, { name: unique("root"), role: "operator" }))).toBe("validation_failed:role");
    // an operator cannot hand a tenant's account an operator or agent key, nor another tenant's key
    const op = actorFor(operatorPrincipal);
    expect(await codeAndFieldOf(createApiKey(op, { name: unique("op"), scope: "operator", service_account_id: mine.id }))).toBe(
      "validation_failed:service_account_id",
    );
    expect(
      await codeAndFieldOf(createApiKey(op, { name: unique("other"), scope: "tenant", tenant_id: u.id, service_account_id: mine.id })),
    ).toBe("validation_failed:service_account_id");
    // naming the account is enough for its own tenant's key
    expect((await createApiKey(op, { name: unique("ok"), scope: "tenant", service_account_id: mine.id })).apiKey.tenantId).toBe(t.id);
    expect(await codeAndFieldOf(createServiceAccount(op, { name: unique("t"), role: "tenant_admin" }))).toBe("validation_failed:tenant_id");
    expect(await codeAndFieldOf(createServiceAccount(op, { name: mine.name, role: "tenant_admin", tenant_id: t.id }))).toBe(
      "conflict:name",
    );
  });

  it("keys the platform makes for itself belong to a platform service account an admin sees and can disable", async () => {
    const t = await makeTenant();
    const tool = systemActorFor(unique("provider launcher"));
    const cluster = await makeCluster();
    const agentKey = await createApiKey(tool, { name: unique("node"), scope: "agent", cluster_id: cluster.id });
    const tenantKey = await createApiKey(tool, { name: unique("workload"), scope: "tenant", tenant_id: t.id });
    const platform = (await listServiceAccounts(operatorPrincipal)).find((a) => a.name === tool.principal.label && a.tenant_id === null)!;
    expect(platform).toMatchObject({ role: "operator", created_by: "the platform", keys_in_use: 1 });
    expect(agentKey.apiKey.serviceAccountId).toBe(platform.id);
    // the tenant's key is under an account of that tenant, which its admin sees
    const ofTenant = (await listServiceAccounts(tenantAdminPrincipal(t.id))).find((a) => a.name === tool.principal.label)!;
    expect(tenantKey.apiKey.serviceAccountId).toBe(ofTenant.id);
    await disableServiceAccount(actorFor(operatorPrincipal), platform.id);
    expect(await codeOf(authenticateApiKey(agentKey.key))).toBe("unauthorized");
    expect(await authenticateApiKey(tenantKey.key)).toMatchObject({ kind: "tenant" });
    // the platform cannot quietly make another: the account stays disabled, and the database refuses
    expect(await codeOf(createApiKey(tool, { name: unique("again"), scope: "agent", cluster_id: cluster.id }))).not.toBe("ok");
  });

  it("the database refuses a key with no owner, or with two", async () => {
    const t = await makeTenant();
    const admin = await makeUser("tenant_admin", t.id);
    const sa = await createServiceAccount(actorFor(userPrincipal(admin)), { name: unique("two"), role: "tenant_admin" });
    await expect(insertKey({ hash: "e".repeat(64), tenant: t.id })).rejects.toThrow(/exactly one owner/);
    await expect(insertKey({ hash: "f".repeat(64), tenant: t.id, user: admin.id, account: sa.id })).rejects.toThrow(/exactly one owner/);
    // the CHECK stands behind the trigger
    expect(
      (
        await db().$queryRaw<
          Array<{ def: string }>
        >`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'api_keys_owner_check'`
      )[0]!.def,
    ).toMatch(/num_nonnulls\(owner_user_id, service_account_id\) = 1/);
    await expect(
      db().$executeRaw`INSERT INTO service_accounts (tenant_id, name, role, created_by) VALUES (${t.id}::uuid, 'x', 'operator', 'test')`,
    ).rejects.toThrow(/service_accounts_role_tenant_check/);
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
