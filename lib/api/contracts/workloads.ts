import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import {
  appendLogsBody,
  appendLogsReply,
  jobLogsReply,
  readLogsQuery,
  readReplicaLogsQuery,
  replicaLogsReply,
} from "@/lib/workload-logs/schemas";
import { authErrors, idParams, notFoundError } from "./common";

// What tenants see of their running work, and what agents send of it: workload logs and the GPU
// telemetry of the GPUs the work held.

const staleError = {
  409: {
    description: "The report names a placement that is no longer current (stale_report); nothing was stored",
    schema: errorBodySchema,
  },
} as const;
const payloadError = { 413: { description: "A body over 1 MiB", schema: errorBodySchema } } as const;

const isoTime = z.iso.datetime({ offset: true, message: "Must be an ISO-8601 time" });
const telemetryQuery = z.strictObject({ from: isoTime.optional(), to: isoTime.optional() }).superRefine((q, ctx) => {
  if (q.from && q.to && !(new Date(q.to) > new Date(q.from))) ctx.addIssue({ code: "custom", path: ["to"], message: "Must be after from" });
});

const point = z.object({
  t: z.string(),
  utilization_avg: z.number(),
  memory_used_avg_mb: z.number(),
  temperature_avg_c: z.number(),
  power_avg_w: z.number(),
});
const telemetryReply = (holder: "attempt" | "replica_id") =>
  z.object({
    from: z.string(),
    to: z.string(),
    step_s: z.number(),
    source: z.enum(["raw", "rollup"]),
    series: z.array(
      z.object({
        gpu_id: z.string(),
        gpu_index: z.number().nullable(),
        hostname: z.string().nullable(),
        ...(holder === "attempt" ? { attempt: z.number() } : { replica_id: z.string() }),
        held_from: z.string(),
        held_to: z.string(),
        points: z.array(point),
      }),
    ),
  });

export const appendJobLogs = defineContract({
  operationId: "appendJobLogs",
  method: "POST",
  path: "/api/jobs/{id}/logs",
  summary: "Ship a job attempt's stdout/stderr chunks (the agent of the node it runs on)",
  description:
    "Fenced like exit reports: the attempt and fence of the job's latest placement. Each (attempt, seq) is stored once, however often it is re-sent; a run's log stops at WORKLOAD_LOG_MAX_BYTES with a marker.",
  tags: ["Jobs"],
  access: ["agent"],
  params: idParams,
  body: appendLogsBody,
  bodyLimitBytes: 1024 * 1024,
  rateLimitPerMinute: 12_000,
  responses: {
    202: { description: "Acknowledged", schema: appendLogsReply },
    ...authErrors,
    ...notFoundError,
    ...staleError,
    ...payloadError,
  },
});

export const readJobLogs = defineContract({
  operationId: "readJobLogs",
  method: "GET",
  path: "/api/jobs/{id}/logs",
  summary: "A job attempt's log, in order (poll with after_seq for a live tail)",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  params: idParams,
  query: readLogsQuery,
  // the log page polls every 2 s; a page is at most about half a MiB
  rateLimitPerMinute: 240,
  responses: { 200: { description: "Log chunks", schema: jobLogsReply }, ...authErrors, ...notFoundError },
});

export const jobGpuMetrics = defineContract({
  operationId: "getJobGpuMetrics",
  method: "GET",
  path: "/api/jobs/{id}/metrics",
  summary: "Utilization, memory, temperature and power of the GPUs the job held, only while it held them",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  params: idParams,
  query: telemetryQuery,
  responses: { 200: { description: "One series per GPU and attempt", schema: telemetryReply("attempt") }, ...authErrors, ...notFoundError },
});

const replicaLogParams = z.strictObject({ id: z.uuid("Must be an id"), replica_id: z.uuid("Must be a replica id") });

export const appendReplicaLogs = defineContract({
  operationId: "appendReplicaLogs",
  method: "POST",
  path: "/api/endpoints/{id}/replicas/{replica_id}/logs",
  summary: "Ship an endpoint replica's serving container output (the agent of its node)",
  description: "Fenced: the replica's fence and attempt 1, while the replica is live. Each (replica, seq) is stored once.",
  tags: ["Endpoints"],
  access: ["agent"],
  params: replicaLogParams,
  body: appendLogsBody,
  bodyLimitBytes: 1024 * 1024,
  rateLimitPerMinute: 12_000,
  responses: {
    202: { description: "Acknowledged", schema: appendLogsReply },
    ...authErrors,
    ...notFoundError,
    ...staleError,
    ...payloadError,
  },
});

export const readReplicaLogs = defineContract({
  operationId: "readEndpointLogs",
  method: "GET",
  path: "/api/endpoints/{id}/logs",
  summary: "A replica's serving log, in order (the newest replica unless replica_id names one)",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  query: readReplicaLogsQuery,
  rateLimitPerMinute: 240,
  responses: { 200: { description: "Log chunks", schema: replicaLogsReply }, ...authErrors, ...notFoundError },
});

export const endpointGpuMetrics = defineContract({
  operationId: "getEndpointGpuMetrics",
  method: "GET",
  path: "/api/endpoints/{id}/gpu-metrics",
  summary: "Utilization, memory, temperature and power of the GPUs the endpoint's replicas held, only while they held them",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  query: telemetryQuery,
  responses: {
    200: { description: "One series per GPU and replica", schema: telemetryReply("replica_id") },
    ...authErrors,
    ...notFoundError,
  },
});

export const appendPodLogs = defineContract({
  operationId: "appendPodLogs",
  method: "POST",
  path: "/api/pods/{id}/logs",
  summary: "Ship a pod container's stdout/stderr chunks (the agent of the node it runs on)",
  description:
    "Fenced: the attempt and fence of the pod's latest placement. Each (placement, seq) is stored once; a placement's log stops at WORKLOAD_LOG_MAX_BYTES with a marker.",
  tags: ["Pods"],
  access: ["agent"],
  params: idParams,
  body: appendLogsBody,
  bodyLimitBytes: 1024 * 1024,
  rateLimitPerMinute: 12_000,
  responses: {
    202: { description: "Acknowledged", schema: appendLogsReply },
    ...authErrors,
    ...notFoundError,
    ...staleError,
    ...payloadError,
  },
});

export const readPodLogs = defineContract({
  operationId: "readPodLogs",
  method: "GET",
  path: "/api/pods/{id}/logs",
  summary: "A pod placement's log, in order (the latest unless attempt names one; poll with after_seq)",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  query: readLogsQuery,
  rateLimitPerMinute: 240,
  responses: { 200: { description: "Log chunks", schema: jobLogsReply }, ...authErrors, ...notFoundError },
});

export const podGpuMetrics = defineContract({
  operationId: "getPodGpuMetrics",
  method: "GET",
  path: "/api/pods/{id}/metrics",
  summary: "Utilization, memory, temperature and power of the GPUs the pod held, only while it held them",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  query: telemetryQuery,
  responses: {
    200: { description: "One series per GPU and placement", schema: telemetryReply("attempt") },
    ...authErrors,
    ...notFoundError,
  },
});
