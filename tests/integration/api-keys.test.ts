import { describe, expect, it, vi } from "vitest";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { hashApiKey } from "@/lib/api-keys/key-format";
import { listApiKeys } from "@/lib/api-keys/queries";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { updateTenant } from "@/lib/tenants/update-tenant";
import {
  actorFor,
  makeCluster,
  makeKey,
  makeTenant,
  makeUser,
  tenantAdminPrincipal,
  tenantMemberPrincipal,
  unique,
} from "../support/fixtures";
import { codeOf } from "../support/outcomes";

describe("API keys", () => {
  it("stores only the SHA-256 and a 12-character prefix; the key resolves to its principal", async () => {
    const t = await makeTenant();
    const { apiKey, key } = await makeKey({ scope: "tenant", tenant_id: t.id });
    const row = await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } });
    expect(row.keyHash).toBe(hashApiKey(key));
    expect(row.prefix).toBe(key.slice(0, 12));
    expect(JSON.stringify(row)).not.toContain(key);
    expect(await authenticateApiKey(key)).toMatchObject({ kind: "tenant", tenantId: t.id, keyId: apiKey.id });
  });

  it("binds agent keys to their cluster and operator keys to nothing", async () => {
    const c = await makeCluster();
    const agent = await makeKey({ scope: "agent", cluster_id: c.id });
    expect(await authenticateApiKey(agent.key)).toMatchObject({ kind: "agent", clusterId: c.id });
    const op = await makeKey({ scope: "operator" });
    expect(await authenticateApiKey(op.key)).toMatchObject({ kind: "operator" });
  });

  it("stops working on the very next request after revocation", async () => {
    const t = await makeTenant();
    const { apiKey, key } = await makeKey({ scope: "tenant", tenant_id: t.id });
    await authenticateApiKey(key);
    await revokeApiKey(actorFor(tenantAdminPrincipal(t.id)), apiKey.id);
    expect(await codeOf(authenticateApiKey(key))).toBe("unauthorized");
    // revoking again is harmless and records nothing new
    await revokeApiKey(systemActor, apiKey.id);
    expect(await db().auditLog.count({ where: { targetId: apiKey.id, action: "api_key.revoked" } })).toBe(1);
  });

  it("refuses keys of a suspended tenant", async () => {
    const t = await makeTenant();
    const { key } = await makeKey({ scope: "tenant", tenant_id: t.id });
    await updateTenant(systemActor, t.id, { status: "suspended" });
    expect(await codeOf(authenticateApiKey(key))).toBe("forbidden");
  });

  it("records the last use, at most once a minute", async () => {
    const { apiKey, key } = await makeKey({ scope: "operator" });
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt).toBeNull();
    await authenticateApiKey(key);
    const first = (await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt;
    expect(first).toBeInstanceOf(Date);
    await authenticateApiKey(key);
    expect((await db().apiKey.findUniqueOrThrow({ where: { id: apiKey.id } })).lastUsedAt).toEqual(first);
  });

  it("tenant admins create tenant keys for their own tenant only; members create none", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const c = await makeCluster();
    const asA = actorFor(tenantAdminPrincipal(a.id));
    const own = await createApiKey(asA, { name: "ci", scope: "tenant" });
    expect(own.apiKey.tenantId).toBe(a.id);
    expect(await codeOf(createApiKey(asA, { name: "x", scope: "tenant", tenant_id: b.id }))).toBe("forbidden");
    expect(await codeOf(createApiKey(asA, { name: "x", scope: "agent", cluster_id: c.id }))).toBe("forbidden");
    expect(await codeOf(createApiKey(asA, { name: "x", scope: "operator" }))).toBe("forbidden");
    expect(await codeOf(createApiKey(actorFor(tenantMemberPrincipal(a.id)), { name: "x", scope: "tenant" }))).toBe("forbidden");
  });

  it("validates the binding: tenant keys need a real tenant, agent keys a real cluster", async () => {
    const err1 = await createApiKey(systemActor, { name: "x", scope: "tenant" }).catch((e) => e);
    expect(err1.details).toEqual([{ path: "tenant_id", message: "Required for tenant keys" }]);
    const err2 = await createApiKey(systemActor, { name: "x", scope: "agent", cluster_id: "00000000-0000-4000-8000-000000000000" }).catch(
      (e) => e,
    );
    expect(err2.details[0].path).toBe("cluster_id");
    const err3 = await createApiKey(systemActor, { name: "x", scope: "operator", tenant_id: (await makeTenant()).id }).catch((e) => e);
    expect(err3.code).toBe("validation_failed");
  });

  it("lists a tenant's keys only to that tenant, and revoking another tenant's key is not found", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const ka = await makeKey({ scope: "tenant", tenant_id: a.id });
    const kb = await makeKey({ scope: "tenant", tenant_id: b.id });
    const listed = await listApiKeys(tenantAdminPrincipal(a.id), { limit: 100 });
    expect(listed.data.map((k) => k.id)).toEqual([ka.apiKey.id]);
    expect(await codeOf(revokeApiKey(actorFor(tenantAdminPrincipal(a.id)), kb.apiKey.id))).toBe("not_found");
    expect(await codeOf(authenticateApiKey(kb.key))).toBe("ok");
  });

  it("the database refuses a key whose binding contradicts its scope", async () => {
    const t = await makeTenant();
    // an owner who may hold any key, so the binding is what is judged
    const owner = await makeUser("operator");
    await expect(
      db()
        .$executeRaw`INSERT INTO api_keys (name, prefix, key_hash, scope, tenant_id, owner_user_id) VALUES ('bad', 'gf_123456789', ${hashApiKey(unique("k"))}, 'agent', ${t.id}::uuid, ${owner.id}::uuid)`,
    ).rejects.toThrow(/api_keys_scope_binding_check/);
  });

  describe("agent keys remembered between requests", () => {
    const lookups = () => vi.spyOn(pool(), "query");
    /** Authenticates until a request no longer reads the database (the listener is up), or fails. */
    async function untilRemembered(key: string) {
      const spy = lookups();
      try {
        for (let i = 0; i < 100; i++) {
          spy.mockClear();
          await authenticateApiKey(key);
          if (spy.mock.calls.length === 0) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error("the agent key was never remembered");
      } finally {
        spy.mockRestore();
      }
    }
    async function untilRefused(key: string) {
      for (let i = 0; i < 100; i++) {
        if ((await codeOf(authenticateApiKey(key))) === "unauthorized") return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("the revoked key was still accepted after 5 s");
    }

    it("skips the database for a known agent key, but never for tenant keys", async () => {
      const c = await makeCluster();
      const agent = await makeKey({ scope: "agent", cluster_id: c.id });
      await untilRemembered(agent.key);
      const t = await makeTenant();
      const tenant = await makeKey({ scope: "tenant", tenant_id: t.id });
      await authenticateApiKey(tenant.key);
      const spy = lookups();
      expect(await authenticateApiKey(agent.key)).toMatchObject({ kind: "agent", clusterId: c.id, keyId: agent.apiKey.id });
      expect(spy).not.toHaveBeenCalled();
      await authenticateApiKey(tenant.key);
      expect(spy).toHaveBeenCalled();
      spy.mockRestore();
    });

    it("refuses a remembered key on the next request after revocation through the service", async () => {
      const c = await makeCluster();
      const { apiKey, key } = await makeKey({ scope: "agent", cluster_id: c.id });
      await untilRemembered(key);
      await revokeApiKey(systemActor, apiKey.id);
      expect(await codeOf(authenticateApiKey(key))).toBe("unauthorized");
    });

    it("hears of a revocation made straight in the database, and of a deleted cluster's keys", async () => {
      const c = await makeCluster();
      const revoked = await makeKey({ scope: "agent", cluster_id: c.id });
      await untilRemembered(revoked.key);
      await db().$executeRaw`UPDATE api_keys SET revoked_at = now() WHERE id = ${revoked.apiKey.id}::uuid`;
      await untilRefused(revoked.key);

      const gone = await makeCluster();
      const deleted = await makeKey({ scope: "agent", cluster_id: gone.id });
      await untilRemembered(deleted.key);
      await db().$executeRaw`DELETE FROM api_keys WHERE id = ${deleted.apiKey.id}::uuid`;
      await untilRefused(deleted.key);
    });

    it("trusts nothing it remembered once its listening connection drops, and resumes when it is back", async () => {
      const c = await makeCluster();
      const first = await makeKey({ scope: "agent", cluster_id: c.id });
      const second = await makeKey({ scope: "agent", cluster_id: c.id });
      await untilRemembered(first.key);
      await untilRemembered(second.key);
      const { rows } = await pool().query<{ n: number }>(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'listen:api_keys_changed' AND datname = current_database()",
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      // while nobody listens, every request reads the database: a revocation now is seen at once
      const spy = lookups();
      for (let i = 0; i < 100 && spy.mock.calls.length === 0; i++) {
        await authenticateApiKey(second.key);
        if (spy.mock.calls.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
      expect(spy).toHaveBeenCalled();
      spy.mockRestore();
      await db().$executeRaw`UPDATE api_keys SET revoked_at = now() WHERE id = ${first.apiKey.id}::uuid`;
      expect(await codeOf(authenticateApiKey(first.key))).toBe("unauthorized");
      // the listener reconnects and keys are remembered again
      await untilRemembered(second.key);
    });
  });
});
