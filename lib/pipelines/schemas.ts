import { z } from "zod";
import { imageField } from "@/lib/jobs/schemas";

export const pipelineStepBody = z.strictObject({
  name: z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore"),
  depends_on: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
  gpu_count: z.number().int().min(1).max(4096),
  gpu_type: z.string().trim().min(1).max(32).regex(/^[A-Za-z0-9._-]+$/),
  priority: z.number().int().min(1).max(10).default(5),
  max_retries: z.number().int().min(0).max(10).default(0),
  repeat: z.number().int().min(1).max(100).default(1).meta({ description: "Run the step this many times in a row (a bounded loop)" }),
  image: imageField.optional(),
  command: z.string().trim().min(1).max(10_000).optional(),
  duration_s: z.number().int().min(1).max(30 * 86_400).optional(),
});

export const createPipelineBody = z
  .strictObject({
    tenant_id: z.uuid().optional(),
    name: z.string().trim().min(1).max(200),
    steps: z.array(pipelineStepBody).min(1).max(100),
  })
  .meta({
    id: "CreatePipeline",
    example: {
      name: "rag-refresh",
      steps: [
        { name: "prep", gpu_count: 1, gpu_type: "H100", duration_s: 600 },
        { name: "embed-a", depends_on: ["prep"], gpu_count: 4, gpu_type: "H100" },
        { name: "embed-b", depends_on: ["prep"], gpu_count: 4, gpu_type: "H100" },
        { name: "index", depends_on: ["embed-a", "embed-b"], gpu_count: 1, gpu_type: "H100", repeat: 2 },
      ],
    },
  });

export type CreatePipelineInput = z.output<typeof createPipelineBody>;

export const pipelineJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    status: z.enum(["running", "completed", "failed", "cancelled"]),
    steps: z.array(z.object({ name: z.string(), depends_on: z.array(z.string()), status: z.string(), job_id: z.string().nullable(), iteration: z.number(), repeat: z.number() })),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: "Pipeline" });

export function pipelineJson(p: {
  id: string;
  tenantId: string;
  name: string;
  status: string;
  createdAt: Date;
  finishedAt: Date | null;
  steps: Array<{ name: string; dependsOn: string[]; status: string; jobId: string | null; iteration: number; repeat: number }>;
}): z.infer<typeof pipelineJsonSchema> {
  return {
    id: p.id,
    tenant_id: p.tenantId,
    name: p.name,
    status: p.status as "running",
    steps: p.steps.map((s) => ({ name: s.name, depends_on: s.dependsOn, status: s.status, job_id: s.jobId, iteration: s.iteration, repeat: s.repeat })),
    created_at: p.createdAt.toISOString(),
    finished_at: p.finishedAt?.toISOString() ?? null,
  };
}

export const pipelineInclude = { steps: { orderBy: { position: "asc" as const } } } as const;
