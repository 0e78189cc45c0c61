import { describe, expect, it } from "vitest";
import { assertOperator, assertTenantAdminOrOperator, type Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { isAppError } from "@/lib/errors";
import { decodeCursor, encodeCursor, page } from "@/lib/http/pagination";

const operator: Principal = { kind: "operator", label: "op" };
const admin: Principal = { kind: "tenant", tenantId: "t1", role: "tenant_admin", label: "a" };
const member: Principal = { kind: "tenant", tenantId: "t1", role: "tenant_member", label: "m" };
const agent: Principal = { kind: "agent", clusterId: "c1", keyId: "k", label: "ag" };

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return "ok";
  } catch (e) {
    return isAppError(e) ? e.code : "other";
  }
};

describe("principals", () => {
  it("scopes tenants to their own data and refuses agents tenant data", () => {
    expect(tenantScope(operator)).toEqual({});
    expect(tenantScope(admin)).toEqual({ tenantId: "t1" });
    expect(codeOf(() => tenantScope(agent))).toBe("forbidden");
  });

  it("lets only operators through assertOperator", () => {
    expect(codeOf(() => assertOperator(operator))).toBe("ok");
    for (const p of [admin, member, agent]) expect(codeOf(() => assertOperator(p))).toBe("forbidden");
  });

  it("lets operators and tenant admins manage, not members or agents", () => {
    expect(codeOf(() => assertTenantAdminOrOperator(operator))).toBe("ok");
    expect(codeOf(() => assertTenantAdminOrOperator(admin))).toBe("ok");
    expect(codeOf(() => assertTenantAdminOrOperator(member))).toBe("forbidden");
    expect(codeOf(() => assertTenantAdminOrOperator(agent))).toBe("forbidden");
  });
});

describe("keyset pagination", () => {
  it("round-trips a cursor", () => {
    const c = { createdAt: new Date("2026-01-02T03:04:05.678Z"), id: "3f0e7d9c-0000-4000-8000-000000000001" };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    expect(decodeCursor(undefined)).toBeUndefined();
  });

  it("rejects a forged cursor with a field error", () => {
    expect(codeOf(() => decodeCursor("not-a-cursor"))).toBe("validation_failed");
  });

  it("returns a next cursor only when there is another page", () => {
    const rows = [1, 2, 3].map((i) => ({ id: String(i), createdAt: new Date(1000 * i) }));
    expect(page(rows, 3).nextCursor).toBeNull();
    const p = page(rows, 2);
    expect(p.data).toHaveLength(2);
    expect(decodeCursor(p.nextCursor!)).toEqual({ createdAt: new Date(2000), id: "2" });
  });
});
