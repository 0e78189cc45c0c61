import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";

const label = z.string().trim().min(1).max(100);

/** gpu: node agents run its nodes; slurm: a Slurm bridge runs the whole cluster through Slurm's tools. */
export const CLUSTER_KINDS = ["gpu", "slurm"] as const;

export const createClusterBody = z
  .strictObject({
    name: label,
    region: label.nullish(),
    provider: label.nullish(),
    kind: z
      .enum(CLUSTER_KINDS)
      .default("gpu")
      .meta({ description: "gpu: node agents run its nodes; slurm: its Slurm bridge runs it (npm run slurm-bridge)" }),
  })
  .meta({ id: "CreateCluster", example: { name: "us-east-h100", region: "us-east-1", provider: "on-prem", kind: "gpu" } });

export const updateClusterBody = z
  .strictObject({ name: label.optional(), region: label.nullish(), provider: label.nullish() })
  .refine((b) => Object.keys(b).length > 0, { message: "Send at least one field to change" })
  .meta({ id: "UpdateCluster", example: { region: "us-east-2" } });

export const listClustersQuery = z.strictObject({ ...paginationQuery });

/** A cluster of kind gpu unless it says otherwise. */
export type CreateClusterInput = Omit<z.output<typeof createClusterBody>, "kind"> & { kind?: (typeof CLUSTER_KINDS)[number] };
export type UpdateClusterInput = z.output<typeof updateClusterBody>;

export const clusterJsonSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    region: z.string().nullable(),
    provider: z.string().nullable(),
    kind: z.enum(CLUSTER_KINDS),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Cluster" });

export const clusterSelect = { id: true, name: true, region: true, provider: true, kind: true, createdAt: true, updatedAt: true } as const;

export function clusterJson(c: Prisma.ClusterGetPayload<{ select: typeof clusterSelect }>): z.infer<typeof clusterJsonSchema> {
  return {
    id: c.id,
    name: c.name,
    region: c.region,
    provider: c.provider,
    kind: oneOf(CLUSTER_KINDS, c.kind, "clusters.kind"),
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
