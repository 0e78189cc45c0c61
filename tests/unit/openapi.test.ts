import { describe, expect, it } from "vitest";
import { allContracts } from "@/lib/api/contracts";
import { buildOpenApiDocument } from "@/lib/api/openapi";

describe("OpenAPI document", () => {
  const doc = buildOpenApiDocument();

  it("describes every contract exactly once, with unique operation ids", () => {
    const ids = allContracts.map((c) => c.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of allContracts) {
      const op = (doc.paths?.[c.path] as Record<string, { operationId: string }> | undefined)?.[c.method.toLowerCase()];
      expect(op?.operationId, `${c.method} ${c.path}`).toBe(c.operationId);
    }
  });

  it("marks authenticated operations with the bearer scheme and public ones without", () => {
    for (const c of allContracts) {
      const op = (doc.paths![c.path] as Record<string, { security: unknown[] }>)[c.method.toLowerCase()]!;
      expect(op.security).toEqual(c.access === "public" ? [] : [{ apiKey: [] }]);
    }
  });

  it("generates request schemas from the zod contracts (required fields and enums included)", () => {
    const schemas = doc.components?.schemas as Record<string, { required?: string[]; properties?: Record<string, { enum?: string[] }> }>;
    expect(schemas.CreateTenant?.required).toEqual(expect.arrayContaining(["name", "gpu_quota"]));
    expect(schemas.CreateApiKey?.properties?.scope?.enum).toEqual(["operator", "tenant", "agent"]);
  });

  it("keeps API.md's names for the foundation routes", () => {
    const paths = Object.keys(doc.paths ?? {});
    for (const p of [
      "/api/health",
      "/api/tenants",
      "/api/tenants/{id}",
      "/api/api-keys",
      "/api/api-keys/{id}",
      "/api/clusters",
      "/api/clusters/{id}",
    ]) {
      expect(paths).toContain(p);
    }
  });
});
