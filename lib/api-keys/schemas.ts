import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";
import { TENANT_ROLES } from "@/lib/users/schemas";

const KEY_SCOPES = ["operator", "tenant", "agent"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export const createApiKeyBody = z
  .strictObject({
    name: z.string().trim().min(1, "Name is required").max(100),
    scope: z.enum(KEY_SCOPES),
    tenant_id: z.uuid("Must be a tenant id").optional(),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    node_id: z.uuid("Must be a node id").optional().meta({ description: "Agent keys only: bind the key to one node of its cluster" }),
    expires_at: z.iso
      .datetime({ offset: true, error: "A date and time, e.g. 2027-03-01T00:00:00Z" })
      .optional()
      .meta({ description: "From then on the key authenticates nothing; omitted: it never expires" }),
    service_account_id: z.uuid("Must be a service account id").optional().meta({
      description:
        "Make the key for this service account, to outlive any one person: it acts with the account's role and dies with it. Omitted: the key is yours (made with a key: that key's owner's), and dies with your rights",
    }),
  })
  .meta({ id: "CreateApiKey", example: { name: "ci-pipeline", scope: "tenant", expires_at: "2027-03-01T00:00:00Z" } });

export const listApiKeysQuery = z.strictObject({
  ...paginationQuery,
  scope: z.enum(KEY_SCOPES).optional(),
  tenant_id: z.uuid().optional(),
  include_revoked: z.enum(["true", "false"]).optional(),
  created_by_user_id: z.uuid().optional(),
  owner_user_id: z.uuid().optional(),
  service_account_id: z.uuid().optional(),
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
    tenant_role: z.enum(TENANT_ROLES).nullable().meta({ description: "What a tenant key may do: its creator's role at most" }),
    created_by_user_id: z
      .string()
      .nullable()
      .meta({ description: "The user who created it (null: the platform); hidden from tenants when an operator made it" }),
    created_by: z.string().nullable().meta({ description: "Its creator's email, as the caller may see it" }),
    owner: z
      .object({
        kind: z.enum(["user", "service_account"]),
        id: z.string().nullable().meta({ description: "null where a tenant may not see who (an operator)" }),
        name: z.string(),
      })
      .meta({ description: "Who the key acts for: it carries no more than the owner's role, and dies with the owner's rights" }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    expires_at: z.string().nullable(),
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
  tenantRole: true,
  createdByUserId: true,
  createdBy: { select: { email: true, role: true } },
  ownerUserId: true,
  serviceAccountId: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  expiresAt: true,
} as const;

export type ApiKeyRow = Prisma.ApiKeyGetPayload<{ select: typeof apiKeySelect }>;

/** The names behind keys' owners (ownerNames), for their JSON and the console. */
export type OwnerNames = Map<string, { name: string; role: string }>;

/** A key's owner as the caller may see it: a tenant sees its own people and accounts, never an operator's identity. */
export function keyOwnerJson(
  k: { ownerUserId: string | null; serviceAccountId: string | null },
  names: OwnerNames,
  forTenant: boolean,
): z.infer<typeof apiKeyJsonSchema>["owner"] {
  const id = k.ownerUserId ?? k.serviceAccountId!;
  const known = names.get(id);
  if (k.ownerUserId && forTenant && known?.role === "operator") return { kind: "user", id: null, name: "GPUForge operations" };
  return { kind: k.ownerUserId ? "user" : "service_account", id, name: known?.name ?? id };
}

/** `forTenant`: a tenant sees who of its own people made a key, never an operator's identity. */
export function apiKeyJson(k: ApiKeyRow, forTenant = false, names: OwnerNames = new Map()): z.infer<typeof apiKeyJsonSchema> {
  const hideCreator = forTenant && k.createdBy?.role === "operator";
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scope: k.scope as KeyScope,
    tenant_id: k.tenantId,
    cluster_id: k.clusterId,
    node_id: k.nodeId,
    tenant_role: k.tenantRole as "tenant_admin" | "tenant_member" | null,
    created_by_user_id: hideCreator ? null : k.createdByUserId,
    created_by: hideCreator ? "GPUForge operations" : (k.createdBy?.email ?? null),
    owner: keyOwnerJson(k, names, forTenant),
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
  };
}
