import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";

export const KEY_SCOPES = ["operator", "tenant", "agent"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export const createApiKeyBody = z
  .strictObject({
    name: z.string().trim().min(1, "Name is required").max(100),
    scope: z.enum(KEY_SCOPES),
    tenant_id: z.uuid("Must be a tenant id").optional(),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    node_id: z.uuid("Must be a node id").optional().meta({ description: "Agent keys only: bind the key to one node of its cluster" }),
  })
  .meta({ id: "CreateApiKey", example: { name: "ci-pipeline", scope: "tenant" } });

export const listApiKeysQuery = z.strictObject({
  ...paginationQuery,
  scope: z.enum(KEY_SCOPES).optional(),
  tenant_id: z.uuid().optional(),
  include_revoked: z.enum(["true", "false"]).optional(),
});

export type CreateApiKeyInput = z.output<typeof createApiKeyBody>;

export const apiKeyJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: "First 12 characters of the key, to recognise it" }),
    scope: z.enum(KEY_SCOPES),
    tenant_id: z.string().nullable(),
    cluster_id: z.string().nullable(),
    node_id: z.string().nullable().meta({ description: "A node-bound agent key speaks for this node only" }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: "ApiKey" });

export const apiKeySelect = {
  id: true,
  name: true,
  prefix: true,
  scope: true,
  tenantId: true,
  clusterId: true,
  nodeId: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  scope: string;
  tenantId: string | null;
  clusterId: string | null;
  nodeId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export function apiKeyJson(k: ApiKeyRow): z.infer<typeof apiKeyJsonSchema> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scope: k.scope as KeyScope,
    tenant_id: k.tenantId,
    cluster_id: k.clusterId,
    node_id: k.nodeId,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}
