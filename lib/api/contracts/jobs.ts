import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { jobJsonSchema, jobListParams, listJobsQuery, submitJobBody, updateJobBody } from "@/lib/jobs/schemas";
import { authErrors, idParams, listOf, notFoundError } from "./common";

const jobReply = z.object({ job: jobJsonSchema });
const unsatisfiableError = { 422: { description: "The job can never run (unsatisfiable)", schema: errorBodySchema } } as const;
const transitionError = {
  409: { description: "Not allowed from the job's current state (invalid_transition)", schema: errorBodySchema },
} as const;

export const submitJob = defineContract({
  operationId: "submitJob",
  method: "POST",
  path: "/api/jobs",
  summary: "Submit a job; it is queued, or blocked by quota until GPUs free up",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  body: submitJobBody,
  rateLimitPerMinute: 6_000,
  responses: { 201: { description: "Submitted", schema: jobReply }, ...authErrors, ...unsatisfiableError },
});

export const listJobs = defineContract({
  operationId: "listJobs",
  method: "GET",
  path: "/api/jobs",
  summary: "List jobs (a tenant sees its own)",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  query: listJobsQuery,
  responses: { 200: { description: "Jobs", schema: listOf(jobJsonSchema) }, ...authErrors },
});

export const getJob = defineContract({
  operationId: "getJob",
  method: "GET",
  path: "/api/jobs/{id}",
  summary: "Get a job with its GPUs, nodes and why it is pending",
  tags: ["Jobs"],
  access: ["operator", "tenant", "agent"],
  params: idParams,
  responses: { 200: { description: "The job", schema: jobReply }, ...authErrors, ...notFoundError },
});

export const updateJob = defineContract({
  operationId: "updateJob",
  method: "PATCH",
  path: "/api/jobs/{id}",
  summary: "Report a job's end (agents, operators) or cancel it (tenants, operators)",
  tags: ["Jobs"],
  access: ["operator", "tenant", "agent"],
  params: idParams,
  body: updateJobBody,
  responses: { 200: { description: "Updated", schema: jobReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const listJobEvents = defineContract({
  operationId: "listJobEvents",
  method: "GET",
  path: "/api/jobs/{id}/events",
  summary: "Every transition of a job, with who and why",
  tags: ["Jobs"],
  access: ["operator", "tenant", "agent"],
  params: idParams,
  responses: {
    200: {
      description: "Events, oldest first",
      schema: z.object({
        data: z.array(
          z.object({
            from_status: z.string().nullable(),
            to_status: z.string(),
            reason: z.string(),
            actor: z.string(),
            created_at: z.string(),
          }),
        ),
      }),
    },
    ...authErrors,
    ...notFoundError,
  },
});

const cycleSchema = z.object({ id: z.string(), considered: z.number(), placed: z.number(), blocked: z.number(), duration_ms: z.number() });

export const runScheduler = defineContract({
  operationId: "runScheduler",
  method: "POST",
  path: "/api/scheduler/run",
  summary: "Run one scheduling cycle now",
  tags: ["Scheduler"],
  access: ["operator"],
  responses: { 200: { description: "The cycle", schema: z.object({ cycle: cycleSchema }) }, ...authErrors },
});

export const schedulerLogs = defineContract({
  operationId: "listSchedulerLogs",
  method: "GET",
  path: "/api/scheduler/logs",
  summary: "Recent scheduling cycles with their decisions",
  tags: ["Scheduler"],
  access: ["operator"],
  query: z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
  responses: {
    200: {
      description: "Cycles, newest first",
      schema: z.object({ data: z.array(cycleSchema.extend({ trigger: z.string(), decisions: z.unknown(), created_at: z.string() })) }),
    },
    ...authErrors,
  },
});

export const exportJobs = defineContract({
  operationId: "exportJobs",
  method: "GET",
  path: "/api/jobs/export",
  summary: "Jobs matching the console's filters (search, status, tenant, GPU type, submitted from/to, sort) as CSV, up to 10,000 rows",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  query: jobListParams,
  responses: {
    200: { description: "The rows as CSV (RFC 4180), a header line first", schema: z.string(), mediaType: "text/csv" },
    ...authErrors,
  },
});
