import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { isImageReference } from "@/lib/fleet/image-reference";
import { listParamsShape } from "@/lib/http/list-params";
import { paginationQuery } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";
import { BLOCK_REASONS, JOB_STATUSES } from "./job-lifecycle";

/** A container image reference; never something a container runtime could read as an option. */
export const imageField = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .refine(isImageReference, "Must be a container image reference, such as nvcr.io/nvidia/pytorch:24.05-py3");

/** A container environment of the tenant's: names a shell accepts, none of GPUForge's own. */
export const envField = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "Environment variable names: letters, digits, underscore, not starting with a digit")
      .refine((k) => !k.startsWith("GPUFORGE_"), "GPUFORGE_ variables are set by the platform"),
    z.string().max(10_000),
  )
  .refine((e) => Object.keys(e).length <= 100, "At most 100 variables");

export const submitJobBody = z
  .strictObject({
    tenant_id: z.uuid("Must be a tenant id").optional(),
    name: z.string().trim().min(1, "Name is required").max(200),
    gpu_count: z
      .number({ error: "A whole number of GPUs" })
      .int("A whole number of GPUs")
      .min(1, "At least 1 GPU")
      .max(4096, "No job may ask for more than 4,096 GPUs; split the work"),
    gpu_type: z
      .string()
      .trim()
      .min(1)
      .max(32)
      .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore"),
    priority: z.number().int().min(1).max(10).default(5),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    max_retries: z.number().int().min(0).max(10).default(0),
    image: imageField.optional(),
    command: z.string().trim().min(1).max(10_000).optional(),
    duration_s: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .optional(),
    env: envField.optional().meta({ description: "Environment variables of the job's container" }),
    reservation_id: z.uuid("Must be a reservation id").optional().meta({
      description: "Run only on the nodes of this reservation of your own, while it is active (its time is paid by the reservation)",
    }),
  })
  .meta({
    id: "SubmitJob",
    example: { name: "llama-finetune", gpu_count: 8, gpu_type: "H100", priority: 3, max_retries: 2, duration_s: 3600 },
  });

/** The placement an agent's report is about: the attempt and fence its heartbeat assignment carried. */
export const placementRef = {
  attempt: z.number().int().min(1).max(1_000_000),
  fence: z.uuid("Must be the fence of the placement, as its assignment carried it"),
};

export const updateJobBody = z
  .strictObject({
    status: z.enum(["completed", "failed", "cancelled", "interrupted"]).meta({
      description:
        "interrupted (agents only): the node stopped the run without an outcome (its lease lapsed); the job is requeued without spending a retry",
    }),
    exit_code: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    error: z.string().max(10_000).optional(),
    attempt: placementRef.attempt.optional().meta({ description: "Agents: the attempt of the placement this report is about" }),
    fence: placementRef.fence.optional().meta({ description: "Agents: the fence of the placement this report is about" }),
  })
  .meta({ id: "UpdateJob", example: { status: "completed", exit_code: 0, attempt: 1, fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11" } });

export const listJobsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(JOB_STATUSES).optional(),
  tenant_id: z.uuid().optional(),
});

export type SubmitJobInput = z.output<typeof submitJobBody>;
export type UpdateJobInput = z.output<typeof updateJobBody>;

export const jobJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    status: z.enum(JOB_STATUSES),
    block_reason: z.enum(BLOCK_REASONS).nullable(),
    pending_reason: z.string().nullable().meta({ description: "Why the job is not running yet" }),
    gpu_count: z.number(),
    gpu_type: z.string(),
    priority: z.number(),
    cluster_id: z.string().nullable(),
    max_retries: z.number(),
    attempts: z.number(),
    failures: z.number(),
    image: z.string().nullable(),
    command: z.string().nullable(),
    duration_s: z.number().nullable(),
    exit_code: z.number().nullable(),
    error: z.string().nullable(),
    gpu_ids: z.array(z.string()),
    node_ids: z.array(z.string()),
    reservation_id: z.string().nullable().meta({ description: "The reservation the job must run in, if it names one" }),
    slurm_job_id: z.string().nullable().meta({ description: "On a Slurm cluster: the Slurm job id of its latest attempt, once submitted" }),
    submitted_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: "Job" });

export const jobSelect = {
  id: true,
  tenantId: true,
  name: true,
  status: true,
  blockReason: true,
  pendingReason: true,
  gpuCount: true,
  gpuType: true,
  priority: true,
  clusterId: true,
  maxRetries: true,
  attempts: true,
  failures: true,
  image: true,
  command: true,
  durationS: true,
  exitCode: true,
  error: true,
  submittedAt: true,
  startedAt: true,
  finishedAt: true,
  submittedBy: true,
  reservationId: true,
  gpus: { select: { id: true, nodeId: true }, orderBy: { index: "asc" as const } },
  placements: { select: { slurm: { select: { slurmJobId: true } } }, orderBy: { attempt: "desc" as const }, take: 1 },
} as const;

export type JobRow = Prisma.JobGetPayload<{ select: typeof jobSelect }>;

export function jobJson(j: JobRow): z.infer<typeof jobJsonSchema> {
  return {
    id: j.id,
    tenant_id: j.tenantId,
    name: j.name,
    status: oneOf(JOB_STATUSES, j.status, "jobs.status"),
    block_reason: j.blockReason === null ? null : oneOf(BLOCK_REASONS, j.blockReason, "jobs.block_reason"),
    pending_reason: j.pendingReason,
    gpu_count: j.gpuCount,
    gpu_type: j.gpuType,
    priority: j.priority,
    cluster_id: j.clusterId,
    max_retries: j.maxRetries,
    attempts: j.attempts,
    failures: j.failures,
    image: j.image,
    command: j.command,
    duration_s: j.durationS,
    exit_code: j.exitCode,
    error: j.error,
    gpu_ids: j.gpus.map((g) => g.id),
    node_ids: [...new Set(j.gpus.map((g) => g.nodeId))],
    reservation_id: j.reservationId,
    slurm_job_id: j.placements[0]?.slurm?.slurmJobId ?? null,
    submitted_at: j.submittedAt.toISOString(),
    started_at: j.startedAt?.toISOString() ?? null,
    finished_at: j.finishedAt?.toISOString() ?? null,
  };
}

// The console's job lists (the operator queue, a tenant's jobs) and their CSV export.
const JOB_STATUS_FILTERS = ["waiting", "active", ...JOB_STATUSES] as const;
/** The orders of the console's job lists (Prisma orderBy, ties broken by id). */
export const JOB_SORT_ORDERS = {
  queue: [{ priority: "asc" }, { submittedAt: "asc" }, { id: "asc" }],
  newest: [{ submittedAt: "desc" }, { id: "desc" }],
  oldest: [{ submittedAt: "asc" }, { id: "asc" }],
  gpus: [{ gpuCount: "desc" }, { submittedAt: "desc" }, { id: "desc" }],
  name: [{ name: "asc" }, { id: "asc" }],
} as const satisfies Record<string, Array<Record<string, "asc" | "desc">>>;
const JOB_SORTS = Object.keys(JOB_SORT_ORDERS) as Array<keyof typeof JOB_SORT_ORDERS>;

export const jobListParams = z.object({
  ...listParamsShape,
  status: z.enum(JOB_STATUS_FILTERS).optional(),
  tenant_id: z.uuid().optional(),
  gpu_type: z.string().max(32).optional(),
  sort: z.enum(JOB_SORTS).default("newest"),
});
export type JobListParams = z.output<typeof jobListParams>;
