import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { paginationQuery } from "@/lib/http/pagination";
import { slurmNodeJson, slurmNodeReport } from "@/lib/slurm/schemas";
import { oneOf } from "@/lib/vocabulary";
import { normaliseNodeAddress } from "./node-address";
import { GPU_STATUSES, NODE_STATUSES, OPERATOR_TARGETS } from "./node-lifecycle";

const label = z.string().trim().min(1).max(100);

const gpuInventoryItem = z.strictObject({
  uuid: z.string().trim().min(1).max(128),
  index: z.number().int().min(0).max(63),
  gpu_type: z
    .string()
    .trim()
    .min(1)
    .max(32)
    .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore"),
  model: z.string().trim().max(128).nullish(),
  memory_total_mb: z.number().int().min(1).max(10_000_000),
});

export const registerNodeBody = z
  .strictObject({
    cluster_id: z.uuid("Must be a cluster id").optional(),
    hostname: z
      .string()
      .trim()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9._-]+$/, "Must be a hostname"),
    pod: label.nullish(),
    rack: label.nullish(),
    cpu_cores: z.number().int().min(1).max(100_000).nullish(),
    memory_gb: z.number().int().min(1).max(1_000_000).nullish(),
    agent_version: z.string().trim().max(64).nullish(),
    address: z
      .string()
      .trim()
      .max(45)
      .refine((a) => normaliseNodeAddress(a) !== null, "Must be the node's IP address (IPv4 or IPv6), not a name")
      .optional()
      .meta({
        description:
          "Where the fleet reaches the node: tenants' SSH commands name it, and the inference gateway connects to published ports there. Unique in the fleet",
      }),
    capabilities: z
      .strictObject({
        containers: z.boolean().meta({
          description: "The node runs tenant work in containers (required for any job or replica that runs an image or a command)",
        }),
        runtime: z
          .string()
          .trim()
          .min(1)
          .max(100)
          .optional()
          .meta({ description: "The container runtime and version, e.g. docker 27.3.1" }),
      })
      .optional(),
    system: z
      .strictObject({
        os: z.string().trim().max(200).optional(),
        kernel: z.string().trim().max(200).optional(),
        driver_version: z.string().trim().max(64).optional(),
        cuda_version: z.string().trim().max(64).optional(),
      })
      .optional(),
    gpus: z.array(gpuInventoryItem).max(64),
    slurm: slurmNodeReport.optional().meta({ description: "A Slurm bridge's node: its Slurm state and inventory (Slurm clusters only)" }),
  })
  .superRefine((b, ctx) => {
    const seenUuid = new Map<string, number>();
    const seenIndex = new Map<number, number>();
    b.gpus.forEach((g, i) => {
      if (seenUuid.has(g.uuid))
        ctx.addIssue({ code: "custom", path: ["gpus", i, "uuid"], message: `Duplicate of gpus[${seenUuid.get(g.uuid)}].uuid` });
      if (seenIndex.has(g.index))
        ctx.addIssue({ code: "custom", path: ["gpus", i, "index"], message: `Duplicate of gpus[${seenIndex.get(g.index)}].index` });
      seenUuid.set(g.uuid, i);
      seenIndex.set(g.index, i);
    });
  })
  .meta({
    id: "RegisterNode",
    example: {
      hostname: "gpu-node-001",
      pod: "pod-a",
      rack: "r12",
      cpu_cores: 224,
      memory_gb: 2048,
      agent_version: "0.2.0",
      address: "10.20.4.17",
      capabilities: { containers: true, runtime: "docker 27.3.1" },
      system: { os: "Ubuntu 22.04.4 LTS", kernel: "5.15.0-105-generic", driver_version: "550.90.07", cuda_version: "12.4" },
      gpus: [
        {
          uuid: "GPU-3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40",
          index: 0,
          gpu_type: "H100",
          model: "NVIDIA H100 80GB HBM3",
          memory_total_mb: 81559,
        },
      ],
    },
  });

export const heartbeatBody = z
  .strictObject({
    gpus: z
      .array(
        z.strictObject({
          uuid: z.string().trim().min(1).max(128),
          healthy: z.boolean(),
          xid_errors: z.array(z.number().int().min(0).max(100_000)).max(100).optional(),
          ecc_uncorrected: z.number().int().min(0).max(1_000_000_000).optional(),
          remap_failure: z.boolean().optional(),
        }),
      )
      .max(64)
      .optional(),
    slurm: slurmNodeReport.optional().meta({ description: "A Slurm bridge's node: what Slurm says of it now (Slurm clusters only)" }),
  })
  .meta({ id: "Heartbeat", example: { gpus: [{ uuid: "GPU-3f1c0a2e-1b7d-4c55-9a0e-0c7c1d2e3f40", healthy: true }] } });

export const updateNodeBody = z
  .strictObject({
    status: z.enum(OPERATOR_TARGETS),
    reason: z.string().trim().min(1).max(500).optional(),
  })
  .meta({ id: "UpdateNode", example: { status: "draining", reason: "Firmware update" } });

export const listNodesQuery = z.strictObject({
  ...paginationQuery,
  cluster_id: z.uuid().optional(),
  status: z.enum(NODE_STATUSES).optional(),
});

export const listGpusQuery = z.strictObject({
  ...paginationQuery,
  cluster_id: z.uuid().optional(),
  status: z.enum(GPU_STATUSES).optional(),
  gpu_type: z.string().max(32).optional(),
});

export type RegisterNodeInput = z.output<typeof registerNodeBody>;
export type HeartbeatInput = z.output<typeof heartbeatBody>;

export const nodeJsonSchema = z
  .object({
    id: z.string(),
    cluster_id: z.string(),
    hostname: z.string(),
    pod: z.string().nullable(),
    rack: z.string().nullable(),
    cpu_cores: z.number().nullable(),
    memory_gb: z.number().nullable(),
    agent_version: z.string().nullable(),
    address: z.string().nullable(),
    capabilities: z.object({ containers: z.boolean(), runtime: z.string().nullable() }),
    system: z.object({
      os: z.string().nullable(),
      kernel: z.string().nullable(),
      driver_version: z.string().nullable(),
      cuda_version: z.string().nullable(),
    }),
    status: z.enum(NODE_STATUSES),
    slurm: slurmNodeJson,
    last_heartbeat_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "Node" });

export const gpuJsonSchema = z
  .object({
    id: z.string(),
    node_id: z.string(),
    uuid: z.string(),
    index: z.number(),
    gpu_type: z.string(),
    model: z.string().nullable(),
    memory_total_mb: z.number(),
    status: z.enum(GPU_STATUSES),
    unhealthy_reason: z.string().nullable(),
    last_xid: z.number().nullable(),
    allocated_job_id: z.string().nullable().meta({ description: "The job holding this GPU" }),
    allocated_replica_id: z.string().nullable().meta({ description: "The endpoint replica holding this GPU" }),
    allocated_pod_id: z
      .string()
      .nullable()
      .meta({ description: "The pod holding this GPU (a GPU has one holder: a job, a replica or a pod)" }),
    foreign_holder: z.string().nullable().meta({
      description: "Work GPUForge did not place that holds this GPU (a job submitted to Slurm directly); it is never placed on meanwhile",
    }),
  })
  .meta({ id: "Gpu" });

export const nodeSelect = {
  id: true,
  clusterId: true,
  hostname: true,
  pod: true,
  rack: true,
  cpuCores: true,
  memoryGb: true,
  agentVersion: true,
  containers: true,
  containerRuntime: true,
  os: true,
  kernel: true,
  driverVersion: true,
  cudaVersion: true,
  address: true,
  status: true,
  statusBeforeOffline: true,
  lastHeartbeatAt: true,
  createdAt: true,
  slurm: { select: { state: true, reason: true } },
} as const;

export const gpuSelect = {
  id: true,
  nodeId: true,
  uuid: true,
  index: true,
  gpuType: true,
  model: true,
  memoryTotalMb: true,
  status: true,
  unhealthyReason: true,
  lastXid: true,
  allocatedJobId: true,
  allocatedReplicaId: true,
  allocatedPodId: true,
  foreignHolder: true,
} as const;

type NodeRow = Prisma.NodeGetPayload<{ select: typeof nodeSelect }>;
type GpuRow = Prisma.GpuGetPayload<{ select: typeof gpuSelect }>;

export function nodeJson(n: NodeRow): z.infer<typeof nodeJsonSchema> {
  return {
    id: n.id,
    cluster_id: n.clusterId,
    hostname: n.hostname,
    pod: n.pod,
    rack: n.rack,
    cpu_cores: n.cpuCores,
    memory_gb: n.memoryGb,
    agent_version: n.agentVersion,
    address: n.address,
    capabilities: { containers: n.containers, runtime: n.containerRuntime },
    system: { os: n.os, kernel: n.kernel, driver_version: n.driverVersion, cuda_version: n.cudaVersion },
    status: oneOf(NODE_STATUSES, n.status, "nodes.status"),
    slurm: n.slurm ? { state: n.slurm.state, reason: n.slurm.reason } : null,
    last_heartbeat_at: n.lastHeartbeatAt?.toISOString() ?? null,
    created_at: n.createdAt.toISOString(),
  };
}

export function gpuJson(g: GpuRow): z.infer<typeof gpuJsonSchema> {
  return {
    id: g.id,
    node_id: g.nodeId,
    uuid: g.uuid,
    index: g.index,
    gpu_type: g.gpuType,
    model: g.model,
    memory_total_mb: g.memoryTotalMb,
    status: oneOf(GPU_STATUSES, g.status, "gpus.status"),
    unhealthy_reason: g.unhealthyReason,
    last_xid: g.lastXid,
    allocated_job_id: g.allocatedJobId,
    allocated_replica_id: g.allocatedReplicaId,
    allocated_pod_id: g.allocatedPodId,
    foreign_holder: g.foreignHolder,
  };
}
