import { describe, expect, it } from "vitest";
import { listSignIns } from "@/lib/api/contracts/accounts";
import { listTransactions } from "@/lib/api/contracts/billing";
import { signupBody } from "@/lib/signup/schemas";

// Inputs that once reached the database and came back as 500s: a list cursor past int8 (BigInt
// accepted it, PostgreSQL did not) and a company name with a NUL (PostgreSQL refuses it in text).
// Each is now refused at the edge, naming its field.

const pathsOf = (r: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }) =>
  r.success ? [] : r.error!.issues.map((i) => i.path.join("."));

describe("list cursors", () => {
  it("take an id that fits a bigint and refuse a longer one, naming cursor", () => {
    for (const q of [listSignIns.query!, listTransactions.query!]) {
      expect(q.safeParse({ limit: 10, cursor: "123456789012345678" }).success).toBe(true);
      expect(pathsOf(q.safeParse({ limit: 10, cursor: "99999999999999999999999" }))).toEqual(["cursor"]);
      expect(pathsOf(q.safeParse({ limit: 10, cursor: "-1" }))).toEqual(["cursor"]);
    }
  });
});

describe("sign-up's company name", () => {
  it("refuses control characters, naming company", () => {
    const body = { email: "ada@example.com", password: "a long passphrase of yours" };
    expect(signupBody.safeParse({ ...body, company: "Analytical GPU Co" }).success).toBe(true);
    expect(pathsOf(signupBody.safeParse({ ...body, company: "Acme\u0000Corp" }))).toEqual(["company"]);
    expect(pathsOf(signupBody.safeParse({ ...body, company: "Acme\nCorp" }))).toEqual(["company"]);
  });
});

describe("a tenant's name", () => {
  it("refuses control characters, naming name", async () => {
    const { createTenantBody } = await import("@/lib/tenants/schemas");
    expect(createTenantBody.safeParse({ name: "Acme", gpu_quota: 1 }).success).toBe(true);
    expect(pathsOf(createTenantBody.safeParse({ name: "Ac\u0000me", gpu_quota: 1 }))).toEqual(["name"]);
  });
});
