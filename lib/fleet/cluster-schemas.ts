import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";

const label = z.string().trim().min(1).max(100);

export const createClusterBody = z
  .strictObject({ name: label, region: label.nullish(), provider: label.nullish() })
  .meta({ id: "CreateCluster", example: { name: "us-east-h100", region: "us-east-1", provider: "on-prem" } });

export const updateClusterBody = z
  .strictObject({ name: label.optional(), region: label.nullish(), provider: label.nullish() })
  .refine((b) => Object.keys(b).length > 0, { message: "Send at least one field to change" })
  .meta({ id: "UpdateCluster", example: { region: "us-east-2" } });

export const listClustersQuery = z.strictObject({ ...paginationQuery });

export type CreateClusterInput = z.output<typeof createClusterBody>;
export type UpdateClusterInput = z.output<typeof updateClusterBody>;

export const clusterJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    region: z.string().nullable(),
    provider: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Cluster" });

export const clusterSelect = { id: true, name: true, region: true, provider: true, createdAt: true, updatedAt: true } as const;

export function clusterJson(c: Prisma.ClusterGetPayload<{ select: typeof clusterSelect }>): z.infer<typeof clusterJsonSchema> {
  return {
    id: c.id,
    name: c.name,
    region: c.region,
    provider: c.provider,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
