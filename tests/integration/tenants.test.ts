import { describe, expect, it } from "vitest";
import { systemActor } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { createTenant } from "@/lib/tenants/create-tenant";
import { getTenantOrThrow, listTenants } from "@/lib/tenants/queries";
import { updateTenant } from "@/lib/tenants/update-tenant";
import { actorFor, makeTenant, tenantAdminPrincipal, unique } from "../support/fixtures";
import { codeOf } from "../support/outcomes";

describe("tenants", () => {
  it("creates a tenant and records who did it in the audit log", async () => {
    const actor = { ...systemActor, requestId: "req-tenant-1" };
    const t = await createTenant(actor, { name: unique("Acme"), gpu_quota: 8, billing_email: "ap@acme.test" });
    expect(t).toMatchObject({ gpuQuota: 8, status: "active", billingEmail: "ap@acme.test" });
    const audit = await db().auditLog.findFirst({ where: { targetId: t.id, action: "tenant.created" } });
    expect(audit).toMatchObject({ tenantId: t.id, requestId: "req-tenant-1", actorKind: "system" });
  });

  it("refuses a duplicate name with a conflict naming the field, and changes nothing", async () => {
    const t = await makeTenant();
    const err = await createTenant(systemActor, { name: t.name, gpu_quota: 1, billing_email: null }).catch((e) => e);
    expect(err.code).toBe("conflict");
    expect(err.details[0].path).toBe("name");
    expect(await db().tenant.count({ where: { name: t.name } })).toBe(1);
    expect(await db().auditLog.count({ where: { action: "tenant.created", details: { path: ["name"], equals: t.name } } })).toBe(1);
  });

  it("lets exactly one of many parallel creators of the same name win", async () => {
    const name = unique("race");
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => createTenant(systemActor, { name, gpu_quota: 1, billing_email: null })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db().tenant.count({ where: { name } })).toBe(1);
  });

  it("suspends and reactivates with distinct audit actions", async () => {
    const t = await makeTenant();
    expect((await updateTenant(systemActor, t.id, { status: "suspended" })).status).toBe("suspended");
    expect((await updateTenant(systemActor, t.id, { status: "active", gpu_quota: 4 })).gpuQuota).toBe(4);
    const actions = (await db().auditLog.findMany({ where: { targetId: t.id }, orderBy: { id: "asc" } })).map((a) => a.action);
    expect(actions).toEqual(["tenant.created", "tenant.suspended", "tenant.reactivated"]);
  });

  it("shows a tenant only itself; another tenant's id is not found, not forbidden", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const asA = tenantAdminPrincipal(a.id);
    expect((await getTenantOrThrow(asA, a.id)).id).toBe(a.id);
    expect(await codeOf(getTenantOrThrow(asA, b.id))).toBe("not_found");
    const list = await listTenants(asA, { limit: 50 });
    expect(list.data.map((t) => t.id)).toEqual([a.id]);
  });

  it("only operators create or edit tenants", async () => {
    const a = await makeTenant();
    const asA = actorFor(tenantAdminPrincipal(a.id));
    expect(await codeOf(createTenant(asA, { name: unique("x"), gpu_quota: 1, billing_email: null }))).toBe("forbidden");
    expect(await codeOf(updateTenant(asA, a.id, { gpu_quota: 1000 }))).toBe("forbidden");
    expect((await db().tenant.findUnique({ where: { id: a.id } }))?.gpuQuota).toBe(a.gpuQuota);
  });

  it("pages through tenants with a stable cursor", async () => {
    // other test files create tenants concurrently: check ours, each exactly once
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) mine.push((await makeTenant()).id);
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const p = await listTenants(systemActor.principal, { limit: 2, cursor });
      for (const t of p.data) {
        expect(seen.has(t.id)).toBe(false);
        seen.add(t.id);
      }
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
    for (const id of mine) expect(seen.has(id)).toBe(true);
  });

  it("the database itself refuses a negative quota or an unknown status", async () => {
    const t = await makeTenant();
    await expect(db().$executeRaw`UPDATE tenants SET gpu_quota = -1 WHERE id = ${t.id}::uuid`).rejects.toThrow(/tenants_gpu_quota_check/);
    await expect(db().$executeRaw`UPDATE tenants SET status = 'deleted' WHERE id = ${t.id}::uuid`).rejects.toThrow(/tenants_status_check/);
  });
});
