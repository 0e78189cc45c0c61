import { z } from "zod";
import { listAuditQuery, auditEntryJsonSchema } from "@/lib/audit/queries";
import { auditListParams } from "@/lib/audit/list-audit";
import { defineContract } from "@/lib/http/contract";
import { authErrors, listOf } from "./common";

export const health = defineContract({
  operationId: "getHealth",
  method: "GET",
  path: "/api/health",
  summary: "Liveness and database check",
  tags: ["Platform"],
  access: "public",
  responses: {
    200: { description: "Healthy", schema: z.object({ status: z.literal("ok"), db: z.literal("ok") }) },
    503: { description: "Database unreachable", schema: z.object({ status: z.literal("degraded"), db: z.literal("error") }) },
  },
});

export const openapi = defineContract({
  operationId: "getOpenApi",
  method: "GET",
  path: "/api/openapi.json",
  summary: "This document",
  tags: ["Platform"],
  access: "public",
  responses: { 200: { description: "OpenAPI 3.1 document" }, 304: { description: "Not modified: the If-None-Match ETag is current" } },
});

export const listAudit = defineContract({
  operationId: "listAuditLog",
  method: "GET",
  path: "/api/audit-log",
  summary: "Audit log, newest first (tenant admins see their tenant's entries)",
  tags: ["Platform"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  query: listAuditQuery,
  responses: { 200: { description: "Entries", schema: listOf(auditEntryJsonSchema) }, ...authErrors },
});

export const exportAuditLog = defineContract({
  operationId: "exportAuditLog",
  method: "GET",
  path: "/api/audit-log/export",
  summary:
    "Audit entries matching the console's filters (search, action, actor kind, target type, from/to) as CSV with actor and target names, up to 10,000 rows",
  tags: ["Platform"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  query: auditListParams,
  responses: {
    200: { description: "The rows as CSV (RFC 4180), a header line first", schema: z.string(), mediaType: "text/csv" },
    ...authErrors,
  },
});
