import { createHash } from "node:crypto";
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import { env } from "@/lib/env";
import type { Contract } from "@/lib/http/contract";
import { allContracts } from "./contracts";

// Generated from the same contracts the route wrapper enforces, never written by hand.

export function buildOpenApiDocument(contracts: Contract[] = allContracts, serverUrl = "/") {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `Authorization: Bearer gf_…`",
  });

  for (const c of contracts) {
    registry.registerPath({
      method: c.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete",
      path: c.path,
      operationId: c.operationId,
      summary: c.summary,
      tags: c.tags,
      description:
        (c.access === "public"
          ? "No credentials needed."
          : `Allowed: ${c.access.join(", ")} credentials${c.tenantRole ? ` (tenant users need ${c.tenantRole})` : ""}.`) +
        (c.description ? ` ${c.description}` : ""),
      security: c.access === "public" ? [] : [{ apiKey: [] }],
      "x-gpuforge-access": c.access,
      ...(c.body ? { "x-gpuforge-body-limit-bytes": c.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES } : {}),
      request: {
        ...(c.params ? { params: c.params as z.ZodObject } : {}),
        ...(c.query ? { query: c.query as z.ZodObject } : {}),
        ...(c.body ? { body: { required: true, content: { "application/json": { schema: c.body } } } } : {}),
      },
      responses: Object.fromEntries(
        Object.entries(c.responses).map(([status, r]) => [
          status,
          r.schema
            ? { description: r.description, content: { [r.mediaType ?? "application/json"]: { schema: r.schema } } }
            : { description: r.description },
        ]),
      ),
    });
  }

  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "GPUForge API",
      version: "1.0.0",
      description:
        "The REST contract node agents, tenants' automation and operators' scripts rely on. " +
        'Errors are `{"error": {"code", "message", "details": [{"path", "message"}]}}`.',
    },
    servers: [{ url: serverUrl }],
  });
}

let served: { body: string; etag: string } | undefined;

/**
 * The served document, serialised once per process: building it walks every contract's schemas
 * (tens of milliseconds), which an anonymous caller could otherwise make us do on every request.
 */
export function openApiDocumentJson(): { body: string; etag: string } {
  if (!served) {
    const body = JSON.stringify(buildOpenApiDocument());
    served = { body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
  }
  return served;
}
