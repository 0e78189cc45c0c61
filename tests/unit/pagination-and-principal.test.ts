import { describe, expect, it } from "vitest";
import { z } from "zod";
import { assertOperator, assertTenantAdminOrOperator, type Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { isAppError } from "@/lib/errors";
import { decodeCursor, encodeCursor, idCursor, page, paginationQuery } from "@/lib/http/pagination";

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

  const forge = (text: string) => Buffer.from(text).toString("base64url");
  // each of these decodes to something a query would choke on: not a uuid, a time PostgreSQL
  // cannot hold, an injection attempt, a third field
  const forged = [
    "not-a-cursor",
    forge("2026-01-02T03:04:05.678Z|not-a-uuid"),
    forge("2026-01-02T03:04:05.678Z|3f0e7d9c-0000-4000-8000-000000000001' OR '1'='1"),
    forge("+275760-09-13T00:00:00.000Z|3f0e7d9c-0000-4000-8000-000000000001"),
    forge("0001-01-01T00:00:00.000Z|3f0e7d9c-0000-4000-8000-000000000001"),
    forge("garbage|3f0e7d9c-0000-4000-8000-000000000001"),
    forge("2026-01-02T03:04:05.678Z|3f0e7d9c-0000-4000-8000-000000000001|extra"),
    forge("2026-01-02T03:04:05.678Z"),
    "====",
  ];

  it("rejects a forged cursor with a field error, in the query schema and behind it", () => {
    const schema = z.strictObject(paginationQuery);
    for (const raw of forged) {
      expect(
        codeOf(() => decodeCursor(raw)),
        raw,
      ).toBe("validation_failed");
      const r = schema.safeParse({ cursor: raw });
      expect(r.success, raw).toBe(false);
      expect(r.error?.issues[0]?.path).toEqual(["cursor"]);
    }
    const good = encodeCursor({ createdAt: new Date("2026-01-02T03:04:05.678Z"), id: "3f0e7d9c-0000-4000-8000-000000000001" });
    expect(schema.parse({ cursor: good }).cursor).toBe(good);
  });

  it("numeric cursors are bigint ids and nothing larger", () => {
    const schema = idCursor();
    for (const ok of ["1", "42", "9223372036854775807"]) expect(schema.safeParse(ok).success, ok).toBe(true);
    for (const bad of ["0", "-1", "1e3", "9223372036854775808", "9".repeat(30), "01", " 1", ""])
      expect(schema.safeParse(bad).success, bad).toBe(false);
  });

  it("returns a next cursor only when there is another page", () => {
    const id = (i: number) => `3f0e7d9c-0000-4000-8000-00000000000${i}`;
    const rows = [1, 2, 3].map((i) => ({ id: id(i), createdAt: new Date(1000 * i) }));
    expect(page(rows, 3).nextCursor).toBeNull();
    const p = page(rows, 2);
    expect(p.data).toHaveLength(2);
    expect(decodeCursor(p.nextCursor!)).toEqual({ createdAt: new Date(2000), id: id(2) });
  });
});
