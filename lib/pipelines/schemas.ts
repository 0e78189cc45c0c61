import { z } from "zod";
import { envField, imageField } from "@/lib/jobs/schemas";

// Pipeline specs: what POST /api/pipelines and the editor on the pipelines page accept. Pure (no
// server imports): the browser editor validates with these very schemas as you type.

export const STEP_KINDS = ["job", "http", "inference"] as const;
export type StepKind = (typeof STEP_KINDS)[number];
export const PIPELINE_STATUSES = ["running", "completed", "failed", "cancelled"] as const;
export const STEP_STATUSES = ["waiting", "running", "completed", "failed", "cancelled", "skipped"] as const;
export const LOOP_ON_EXHAUSTED = ["fail", "continue"] as const;
export const PIPELINE_EVENT_KINDS = [
  "submitted",
  "transition",
  "iteration",
  "output",
  "tool_call",
  "retry",
  "control",
  "deadline",
] as const;

const stepName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore");
const fieldName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, "Letters, digits, dash, underscore");

const retryPolicy = z
  .strictObject({
    max: z.number().int().min(0).max(10).optional().meta({ description: "Retries after the first try (default: max_retries, 0)" }),
    backoff_s: z.number().int().min(1).max(86_400).default(10),
    backoff_factor: z.number().min(1).max(10).default(2),
    max_backoff_s: z.number().int().min(1).max(86_400).default(600),
    on_exit_codes: z
      .array(z.number().int().min(1).max(255))
      .min(1)
      .max(50)
      .optional()
      .meta({ description: "Job steps: only these exit codes retry (default: any failure)" }),
    on_status: z.array(z.number().int().min(400).max(599)).min(1).max(50).optional().meta({
      description: "Tool calls: these HTTP statuses retry (default 408, 429, 500, 502, 503, 504; timeouts and network errors always)",
    }),
  })
  .refine((r) => r.max_backoff_s >= r.backoff_s, { path: ["max_backoff_s"], message: "Must be at least backoff_s" });

const loopSpec = z.strictObject({
  until: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .optional()
    .meta({ description: "Stop once this is true, e.g. steps.check.outputs.passed == true (evaluated after each iteration)" }),
  max: z.number().int().min(1).max(100).meta({ description: "Never more iterations than this" }),
  from: stepName.optional().meta({ description: "The loop body's first step (default: this step alone); this step ends the body" }),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional()
    .meta({ description: "Wall-clock limit of the whole loop, checked before each new iteration (default 3600 with until)" }),
  on_exhausted: z
    .enum(LOOP_ON_EXHAUSTED)
    .optional()
    .meta({ description: "When max or the time limit is reached first: fail the step (default with until) or carry on" }),
});

const headerName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9-]+$/, "Header names: letters, digits, dash");

const toolRequest = z.strictObject({
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]).optional(),
  url: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .optional()
    .meta({ description: "http steps: the URL (its host must be on the operator's allow-list)" }),
  headers: z.record(headerName, z.string().max(8000)).optional().meta({ description: "http steps: may use ${secrets.NAME}" }),
  body: z.unknown().optional().meta({ description: "JSON: the request body (http, inference); strings may hold ${…} expressions" }),
  endpoint: z.string().trim().min(1).max(100).optional().meta({ description: "inference steps: one of your endpoints, by name" }),
  path: z
    .string()
    .trim()
    .regex(/^\/[A-Za-z0-9/._~%-]*$/, "A path starting with /")
    .max(500)
    .optional()
    .meta({ description: "inference steps: default /v1/chat/completions" }),
});

const pipelineStepBody = z.strictObject({
  name: stepName,
  kind: z.enum(STEP_KINDS).default("job").meta({
    description: "job (a container on GPUs), http (a call to an allow-listed URL) or inference (a call to one of your endpoints)",
  }),
  depends_on: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
  gpu_count: z.number().int().min(1).max(4096).optional(),
  gpu_type: z
    .string()
    .trim()
    .min(1)
    .max(32)
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(),
  priority: z.number().int().min(1).max(10).default(5),
  max_retries: z.number().int().min(0).max(10).default(0),
  retry: retryPolicy.optional(),
  repeat: z
    .union([z.number().int().min(1).max(100), loopSpec])
    .default(1)
    .meta({ description: "n: run the step n times in a row; {until, max, from?, timeout_s?, on_exhausted?}: a conditional loop" }),
  image: imageField.optional(),
  command: z.string().trim().min(1).max(10_000).optional().meta({ description: "May use ${steps.<step>.outputs.<field>}" }),
  env: envField.optional().meta({ description: "Values may use ${steps.<step>.outputs.<field>}" }),
  duration_s: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  request: toolRequest.optional(),
  timeout_s: z.number().int().min(1).max(300).optional().meta({ description: "Tool calls: per attempt (default 30)" }),
  outputs: z
    .array(fieldName)
    .max(50)
    .optional()
    .meta({ description: "The output fields this job step posts; references to others are refused at creation" }),
});

export const createPipelineBody = z
  .strictObject({
    tenant_id: z.uuid().optional(),
    name: z.string().trim().min(1).max(200),
    deadline_s: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .optional()
      .meta({ description: "The whole pipeline must finish within this many seconds, or it fails and its work is cancelled" }),
    steps: z.array(pipelineStepBody).min(1).max(100),
  })
  .meta({
    id: "CreatePipeline",
    example: {
      name: "plan-act-check",
      deadline_s: 7200,
      steps: [
        {
          name: "plan",
          kind: "inference",
          request: {
            endpoint: "chat-8b",
            body: {
              messages: [{ role: "user", content: 'Plan the next fine-tune. Feedback: ${steps.check.outputs.body.feedback ?? "none"}' }],
            },
          },
        },
        {
          name: "act",
          depends_on: ["plan"],
          gpu_count: 1,
          gpu_type: "H100",
          image: "nvcr.io/nvidia/pytorch:24.05-py3",
          command: "python act.py",
          env: { PLAN: "${steps.plan.outputs.body.choices[0].message.content}" },
          outputs: ["score"],
        },
        {
          name: "check",
          kind: "http",
          depends_on: ["act"],
          request: {
            method: "POST",
            url: "https://eval.example.com/score",
            headers: { Authorization: "Bearer ${secrets.EVAL_TOKEN}" },
            body: { score: "${steps.act.outputs.score}" },
          },
          repeat: { from: "plan", until: "steps.check.outputs.body.passed == true", max: 5 },
        },
      ],
    },
  });

export type PipelineStepInput = z.output<typeof pipelineStepBody>;

const stepJsonSchema = z.object({
  name: z.string(),
  kind: z.enum(STEP_KINDS),
  depends_on: z.array(z.string()),
  status: z.enum(STEP_STATUSES),
  job_id: z.string().nullable(),
  iteration: z
    .number()
    .meta({ description: "The loop iteration it is in (0-based); on a loop's last step once it completed, the iterations run" }),
  repeat: z.number(),
  loop: z
    .object({
      from: z.string(),
      until: z.string().nullable(),
      max: z.number(),
      timeout_s: z.number().nullable(),
      on_exhausted: z.enum(LOOP_ON_EXHAUSTED),
      started_at: z.string().nullable(),
    })
    .nullable(),
  call_attempt: z.number().meta({ description: "Tool calls: the attempt in flight or last made" }),
  error: z.string().nullable(),
  output: z.unknown().nullable().meta({ description: "Its latest output" }),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});

export const pipelineJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    status: z.enum(PIPELINE_STATUSES),
    reason: z.string().nullable(),
    deadline_at: z.string().nullable(),
    steps: z.array(stepJsonSchema),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: "Pipeline" });

export const pipelineEventJsonSchema = z.object({
  id: z.string(),
  kind: z.enum(PIPELINE_EVENT_KINDS),
  step: z.string().nullable(),
  iteration: z.number().nullable(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).nullable(),
  created_at: z.string(),
});

export const listPipelineLogQuery = z.strictObject({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({ description: "Only entries after this id (follow a running pipeline)" }),
  limit: z.coerce.number().int().min(1).max(500).default(200),
});

export const stepParams = z.strictObject({ id: z.uuid("Must be a pipeline id"), step: stepName });

export const jobOutputsBody = z
  .strictObject({
    attempt: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .meta({ description: "Agents: the attempt of the placement (a workload's own token names it)" }),
    fence: z
      .uuid("Must be the fence of the placement, as its assignment carried it")
      .optional()
      .meta({ description: "Agents: the fence of the placement" }),
    outputs: z
      .record(z.string(), z.unknown())
      .meta({ description: "A small JSON object; later steps read it as steps.<step>.outputs. Posting again replaces it" }),
  })
  .meta({
    id: "JobOutputs",
    example: { attempt: 1, fence: "5b0f2f8e-4a8e-4f65-9a52-0d1f3c2b7e11", outputs: { checkpoint: "s3://ckpt/run-7", eval_loss: 1.92 } },
  });
export type JobOutputsInput = z.output<typeof jobOutputsBody>;
