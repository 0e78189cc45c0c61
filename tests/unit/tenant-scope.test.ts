import { describe, expect, it } from "vitest";
import { scopedTenantId, tenantScope, tenantScopeSql } from "@/lib/auth/tenant-scope";

const tenant = { kind: "tenant", tenantId: "7b6f2c1e-9a51-4a53-8d1e-1c2b3d4e5f60", role: "tenant_member", label: "t@example.com" } as const;
const operator = { kind: "operator", label: "ops@example.com" } as const;
const agent = { kind: "agent", clusterId: "c", keyId: "k", label: "agent" } as const;
const workload = {
  kind: "workload",
  placement: "job",
  jobId: "j",
  attempt: 1,
  fence: "f",
  tenantId: tenant.tenantId,
  label: "job j",
} as const;

describe("tenant scope", () => {
  it("limits a tenant to its own rows and lets operators see all", () => {
    expect(tenantScope(tenant)).toEqual({ tenantId: tenant.tenantId });
    expect(tenantScope(operator)).toEqual({});
  });

  it("puts the tenant in the query as a parameter, never as text", () => {
    const scoped = tenantScopeSql(tenant, "p.tenant_id");
    expect(scoped.sql).toBe("p.tenant_id = ?::uuid");
    expect(scoped.values).toEqual([tenant.tenantId]);
    expect(tenantScopeSql(operator, "tenant_id").sql).toBe("TRUE");
  });

  it("refuses agents and anything that is not a column name", () => {
    expect(() => tenantScope(agent)).toThrow(/not agent/);
    // a workload's credential names one placement, never a tenant's rows
    expect(() => tenantScope(workload)).toThrow(/workload/);
    expect(() => scopedTenantId(workload)).toThrow(/workload/);
    // a domain may say what agents use instead
    expect(() => tenantScope(agent, "Pipelines belong to tenants")).toThrow("Pipelines belong to tenants");
    expect(() => tenantScopeSql(operator, "tenant_id; DROP TABLE jobs")).toThrow(/not a column name/);
  });
});
