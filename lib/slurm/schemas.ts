import { z } from "zod";
import { placementRef } from "@/lib/jobs/schemas";

// The Slurm bridge's side of the agent protocol: what it adds to node registrations and heartbeats,
// the cluster's Slurm picture, and the fenced reports on a placement's Slurm job. Everything here is
// what Slurm's own tools printed, bounded and shaped; nothing in it is trusted to be well formed.

/** The container support the bridge runs tenants' images with (lib/slurm/README in the docs). */
export const CONTAINER_MODES = ["oci", "pyxis", "wrapper", "none"] as const;

const partitionName = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/, "A Slurm partition name");
/** A node state as scontrol or sinfo print it: IDLE+DRAIN, down*, MIXED+PLANNED. */
const nodeState = z
  .string()
  .trim()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z_+*~#!%$@^-]+$/, "A Slurm node state, such as IDLE, MIXED+DRAIN or DOWN+NOT_RESPONDING");
/** A job state as squeue or scontrol print it, or the bridge's own SUBMITTING. */
const jobState = z
  .string()
  .trim()
  .min(2)
  .max(32)
  .regex(/^[A-Z_]+$/, "A Slurm job state, such as PENDING, RUNNING or COMPLETED");
const slurmJobId = z
  .string()
  .trim()
  .regex(/^[0-9]{1,12}$/, "Slurm's numeric job id");
const freeText = (max: number) => z.string().max(max).nullish();
const count = (max: number) => z.number().int().min(0).max(max);

/** A foreign job on a node: work Slurm's users submitted to Slurm directly. */
const foreignJob = z.strictObject({
  slurm_job_id: slurmJobId.optional().meta({ description: "Absent: GPUs Slurm counts in use by jobs the bridge cannot name" }),
  user: z.string().trim().max(64).nullish(),
  partition: partitionName.nullish(),
  gpus: count(64).meta({ description: "GPUs it holds on this node" }),
  indices: z.array(count(63)).max(64).nullish().meta({ description: "The device indices Slurm gave it here, when known" }),
  started_at: z.iso.datetime({ offset: true }).nullish(),
});

/** What the bridge says of a Slurm node in its registration and in every heartbeat. */
export const slurmNodeReport = z
  .strictObject({
    state: nodeState.meta({ description: "Slurm's state of the node, as scontrol prints it (IDLE, MIXED+DRAIN, DOWN+NOT_RESPONDING)" }),
    reason: freeText(500).meta({ description: "Slurm's reason for it (a drain's, a down node's)" }),
    reason_by: z.string().trim().max(64).nullish(),
    reason_at: z.iso.datetime({ offset: true }).nullish(),
    partitions: z.array(partitionName).max(64).optional(),
    cpus: count(1_000_000).nullish(),
    cpus_alloc: count(1_000_000).nullish(),
    memory_mb: count(1_000_000_000).nullish(),
    memory_alloc_mb: count(1_000_000_000).nullish(),
    gres: freeText(500).meta({ description: "The node's GRES as Slurm configures it (gpu:h100:8)" }),
    foreign: z
      .array(foreignJob)
      .max(256)
      .optional()
      .meta({ description: "Jobs submitted to Slurm directly that hold GPUs on this node: GPUForge never places on those GPUs" }),
  })
  .meta({ id: "SlurmNodeReport" });
export type SlurmNodeReport = z.output<typeof slurmNodeReport>;

/** What a heartbeat answers a Slurm node's bridge besides its assignments. */
export const slurmHeartbeatReply = z
  .object({
    drain: z
      .boolean()
      .nullable()
      .meta({ description: "true: drain the node in Slurm with `reason`; false: lift our own drain, if any; null: leave Slurm as it is" }),
    reason: z.string().nullable(),
  })
  .meta({ id: "SlurmDrainInstruction" });

export const slurmNodeJson = z
  .object({ state: z.string(), reason: z.string().nullable() })
  .nullable()
  .meta({ description: "The node's state and reason in Slurm (nodes of a Slurm cluster only)" });

const partition = z.strictObject({
  name: partitionName,
  state: z
    .string()
    .trim()
    .min(1)
    .max(32)
    .regex(/^[A-Za-z_]+$/),
  default: z.boolean(),
  nodes: z.string().max(20_000).meta({ description: "Slurm's host list of the partition's nodes" }),
  node_count: count(100_000),
  max_time_s: count(10 * 365 * 86_400)
    .nullable()
    .meta({ description: "The partition's time limit (null: unlimited)" }),
  gpus: count(10_000_000),
  cpus: count(100_000_000),
});
export type SlurmPartition = z.output<typeof partition>;

export const reportSlurmClusterBody = z
  .strictObject({
    bridge_id: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9-]{8,64}$/, "The bridge process's own id (a UUID)"),
    bridge_host: z.string().trim().max(253).nullish(),
    bridge_version: z.string().trim().max(64).nullish(),
    slurm_cluster_name: z.string().trim().min(1).max(100),
    slurm_version: z.string().trim().min(1).max(64),
    container_mode: z.enum(CONTAINER_MODES),
    settings: z
      .strictObject({
        min_job_age_s: count(10_000_000).nullish(),
        slurmd_timeout_s: count(10_000_000).nullish(),
        select_type: z.string().trim().max(100).nullish(),
        accounting_storage: z.string().trim().max(100).nullish(),
        user: z.string().trim().max(64).nullish(),
      })
      .optional(),
    partitions: z.array(partition).max(512),
  })
  .meta({
    id: "ReportSlurmCluster",
    example: {
      bridge_id: "0f8c5e0e-2d4b-4f43-9d6e-6a7c2b1d9e10",
      bridge_host: "login1",
      bridge_version: "0.5.0",
      slurm_cluster_name: "hpc",
      slurm_version: "22.05.8",
      container_mode: "oci",
      settings: { min_job_age_s: 300, slurmd_timeout_s: 300, accounting_storage: "accounting_storage/none" },
      partitions: [
        { name: "gpu", state: "UP", default: true, nodes: "gpu[01-16]", node_count: 16, max_time_s: 172800, gpus: 128, cpus: 2048 },
      ],
    },
  });
export type ReportSlurmClusterInput = z.output<typeof reportSlurmClusterBody>;

export const slurmClusterJson = z
  .object({
    cluster_id: z.string(),
    slurm_cluster_name: z.string(),
    slurm_version: z.string(),
    container_mode: z.enum(CONTAINER_MODES),
    partitions: z.array(partition),
    settings: z.record(z.string(), z.unknown()),
    bridge: z.object({ id: z.string(), host: z.string().nullable(), version: z.string().nullable(), reported_at: z.string() }),
  })
  .meta({ id: "SlurmCluster" });

export const reportSlurmJobBody = z
  .strictObject({
    ...placementRef,
    state: jobState.meta({
      description:
        "The Slurm job's state (squeue/scontrol), or SUBMITTING before the bridge calls sbatch (the reply carries what to submit)",
    }),
    slurm_job_id: slurmJobId.optional(),
    reason: freeText(500),
    nodes: z.string().max(20_000).nullish().meta({ description: "Slurm's host list of the job's nodes" }),
    partition: partitionName.nullish(),
    exit_code: z
      .string()
      .regex(/^\d{1,6}:\d{1,6}$/, "Slurm's code:signal")
      .nullish(),
    submitted_at: z.iso.datetime({ offset: true }).nullish(),
    started_at: z.iso.datetime({ offset: true }).nullish().meta({ description: "Slurm's StartTime: the run is billed from it" }),
    ended_at: z.iso.datetime({ offset: true }).nullish().meta({ description: "Slurm's EndTime: the run's final usage ends there" }),
  })
  .meta({
    id: "ReportSlurmJob",
    example: {
      attempt: 1,
      fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11",
      state: "RUNNING",
      slurm_job_id: "4812",
      nodes: "gpu[01-02]",
      started_at: "2026-12-01T10:00:04Z",
    },
  });
export type ReportSlurmJobInput = z.output<typeof reportSlurmJobBody>;

const slurmAttempt = z.object({
  attempt: z.number(),
  slurm_job_id: z.string().nullable(),
  account: z.string().nullable(),
  partition: z.string().nullable(),
  state: z.string(),
  reason: z.string().nullable(),
  nodes: z.string().nullable(),
  exit_code: z.string().nullable(),
  submitted_at: z.string().nullable(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  history: z.array(z.object({ state: z.string(), reason: z.string().nullable(), slurm_job_id: z.string().nullable(), at: z.string() })),
});
export type SlurmAttemptJson = z.infer<typeof slurmAttempt>;

export const jobSlurmReply = z
  .object({ slurm_job_id: z.string().nullable(), data: z.array(slurmAttempt) })
  .meta({ id: "JobSlurm", description: "The job's Slurm jobs, newest attempt first, each with the states Slurm reported" });

export const reportSlurmJobReply = z
  .object({
    slurm: slurmAttempt,
    submission: z
      .object({
        tenant_id: z.string(),
        account: z.string(),
        gpu_type: z.string(),
        gpu_count: z.number(),
        duration_s: z.number().nullable(),
        nodes: z.array(z.object({ node_id: z.string(), hostname: z.string(), gpu_ids: z.array(z.string()) })),
      })
      .meta({ description: "What the placement is: its tenant's Slurm account and exactly the nodes and GPUs GPUForge chose" }),
  })
  .meta({ id: "ReportSlurmJobReply" });
