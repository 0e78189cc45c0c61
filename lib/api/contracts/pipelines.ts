import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import {
  createPipelineBody,
  jobOutputsBody,
  listPipelineLogQuery,
  pipelineEventJsonSchema,
  pipelineJsonSchema,
  stepParams,
} from "@/lib/pipelines/schemas";
import { putSecretBody, secretJsonSchema, secretParams } from "@/lib/secrets/schemas";
import { authErrors, idParams, notFoundError } from "./common";

// Agentic workflows: pipelines of job and tool-call steps, their outputs, loops, control and log;
// the outputs a job's placement posts; the secrets tool calls reference by name.

const unsatisfiableError = { 422: { description: "A job step can never run (unsatisfiable)", schema: errorBodySchema } } as const;
const transitionError = {
  409: { description: "Not allowed in the pipeline's or step's current state (invalid_transition)", schema: errorBodySchema },
} as const;
const staleError = {
  409: { description: "The placement is no longer current or has ended (stale_report); nothing was stored", schema: errorBodySchema },
} as const;
const tooLargeError = {
  413: { description: "Outputs larger than PIPELINE_OUTPUT_MAX_BYTES (payload_too_large)", schema: errorBodySchema },
} as const;
const pipelineReply = z.object({ pipeline: pipelineJsonSchema });
const pipelineLogSchema = z.array(pipelineEventJsonSchema);

export const createPipeline = defineContract({
  operationId: "createPipeline",
  method: "POST",
  path: "/api/pipelines",
  summary: "Submit a pipeline: job and tool-call steps with dependencies, outputs, loops and a deadline",
  description:
    "Steps start once everything they depend on completed. Expressions (${steps.<step>.outputs.<field>}, loop.iteration, secrets.NAME in http headers) are checked at creation: an unknown step or field, a step that does not run before, an http host off the allow-list, an unknown endpoint or secret answer 400 naming the step's field.",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  body: createPipelineBody,
  responses: { 201: { description: "Accepted; root steps started", schema: pipelineReply }, ...authErrors, ...unsatisfiableError },
});

export const listPipelines = defineContract({
  operationId: "listPipelines",
  method: "GET",
  path: "/api/pipelines",
  summary: "List pipelines (a tenant sees its own)",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  responses: { 200: { description: "Pipelines, newest first", schema: z.object({ data: z.array(pipelineJsonSchema) }) }, ...authErrors },
});

export const getPipeline = defineContract({
  operationId: "getPipeline",
  method: "GET",
  path: "/api/pipelines/{id}",
  summary: "A pipeline with its steps, their latest outputs and its workflow log",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: { description: "The pipeline", schema: z.object({ pipeline: pipelineJsonSchema, log: pipelineLogSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const getPipelineLog = defineContract({
  operationId: "getPipelineLog",
  method: "GET",
  path: "/api/pipelines/{id}/log",
  summary: "The workflow log: every step transition, iteration, output, tool call and retry, oldest first",
  description: "Follow a running pipeline with ?after=<the last id seen>.",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  params: idParams,
  query: listPipelineLogQuery,
  responses: {
    200: { description: "Log entries", schema: z.object({ data: pipelineLogSchema, next_after: z.string().nullable() }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const getPipelineOutputs = defineContract({
  operationId: "getPipelineOutputs",
  method: "GET",
  path: "/api/pipelines/{id}/outputs",
  summary: "Every step's output, per loop iteration",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: {
      description: "Outputs, oldest first",
      schema: z.object({
        data: z.array(
          z.object({
            step: z.string(),
            iteration: z.number(),
            output: z.unknown(),
            bytes: z.number(),
            source: z.string(),
            created_at: z.string(),
          }),
        ),
      }),
    },
    ...authErrors,
    ...notFoundError,
  },
});

export const cancelPipeline = defineContract({
  operationId: "cancelPipeline",
  method: "POST",
  path: "/api/pipelines/{id}/cancel",
  summary: "Cancel a running pipeline: its running jobs are cancelled, tool calls abandoned, waiting steps skipped; audited",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "Cancelled", schema: pipelineReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const retryPipelineStep = defineContract({
  operationId: "retryPipelineStep",
  method: "POST",
  path: "/api/pipelines/{id}/steps/{step}/retry",
  summary: "Retry a failed step of a failed pipeline; the steps skipped because of it wait again",
  tags: ["Pipelines"],
  access: ["operator", "tenant"],
  params: stepParams,
  responses: { 200: { description: "Running again", schema: pipelineReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const postJobOutputs = defineContract({
  operationId: "postJobOutputs",
  method: "POST",
  path: "/api/jobs/{id}/outputs",
  summary: "Post a running placement's outputs (its agent, or the workload with its GPUFORGE_REPORT_TOKEN)",
  description:
    "Fenced like exit reports: an agent names the placement's attempt and fence; a workload's token names its own. Accepted only while that placement runs; posting again replaces the outputs. At most PIPELINE_OUTPUT_MAX_BYTES.",
  tags: ["Jobs"],
  access: ["agent", "workload"],
  params: idParams,
  body: jobOutputsBody,
  bodyLimitBytes: 1024 * 1024 + 4096,
  rateLimitPerMinute: 600,
  responses: {
    200: { description: "Stored", schema: z.object({ job_id: z.string(), attempt: z.number(), bytes: z.number() }) },
    ...authErrors,
    ...notFoundError,
    ...staleError,
    ...tooLargeError,
  },
});

export const listJobOutputs = defineContract({
  operationId: "listJobOutputs",
  method: "GET",
  path: "/api/jobs/{id}/outputs",
  summary: "A job's outputs, per attempt that posted any",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: {
      description: "Outputs, newest attempt first",
      schema: z.object({
        data: z.array(z.object({ attempt: z.number(), outputs: z.unknown(), bytes: z.number(), posted_at: z.string() })),
      }),
    },
    ...authErrors,
    ...notFoundError,
  },
});

export const listSecrets = defineContract({
  operationId: "listSecrets",
  method: "GET",
  path: "/api/secrets",
  summary: "Your secrets for tool calls, by name (values are never returned)",
  tags: ["Pipelines"],
  access: ["tenant"],
  responses: { 200: { description: "Secrets", schema: z.object({ data: z.array(secretJsonSchema) }) }, ...authErrors },
});

export const putSecret = defineContract({
  operationId: "putSecret",
  method: "PUT",
  path: "/api/secrets/{name}",
  summary: "Create or replace a secret that http steps reference as ${secrets.NAME}",
  tags: ["Pipelines"],
  access: ["tenant"],
  tenantRole: "tenant_admin",
  params: secretParams,
  body: putSecretBody,
  bodyLimitBytes: 16 * 1024,
  rateLimitPerMinute: 120,
  responses: {
    200: { description: "Replaced", schema: z.object({ secret: secretJsonSchema }) },
    201: { description: "Created", schema: z.object({ secret: secretJsonSchema }) },
    ...authErrors,
  },
});

export const deleteSecret = defineContract({
  operationId: "deleteSecret",
  method: "DELETE",
  path: "/api/secrets/{name}",
  summary: "Delete a secret; steps that reference it fail when they call",
  tags: ["Pipelines"],
  access: ["tenant"],
  tenantRole: "tenant_admin",
  params: secretParams,
  responses: { 204: { description: "Deleted" }, ...authErrors, ...notFoundError },
});
