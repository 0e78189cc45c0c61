import { z } from "zod";
import { heartbeatReplySchema } from "@/lib/fleet/assignments";
import {
  gpuJsonSchema,
  heartbeatBody,
  listGpusQuery,
  listNodesQuery,
  nodeJsonSchema,
  registerNodeBody,
  updateNodeBody,
} from "@/lib/fleet/node-schemas";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { metricsBatchBody, metricsBatchReply, seriesQuery, seriesReply } from "@/lib/metrics/schemas";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

const nodeWithGpus = z.object({ node: nodeJsonSchema, gpus: z.array(gpuJsonSchema) });

export const registerNode = defineContract({
  operationId: "registerNode",
  method: "POST",
  path: "/api/clusters/nodes",
  summary: "Register or update a node and its GPUs (idempotent by cluster + hostname; GPUs by uuid)",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  body: registerNodeBody,
  responses: {
    201: { description: "Registered", schema: nodeWithGpus },
    200: { description: "Already known; updated", schema: nodeWithGpus },
    ...authErrors,
    ...conflictError,
  },
});

export const heartbeat = defineContract({
  operationId: "nodeHeartbeat",
  method: "POST",
  path: "/api/clusters/nodes/{id}/heartbeat",
  summary: "Node heartbeat; answers with what the node should be running",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  params: idParams,
  body: heartbeatBody,
  // every node of a cluster may heartbeat with the cluster's one agent key: a budget per node
  rateLimitPerNodePerMinute: 600,
  rateLimitPerMinute: 120_000,
  responses: {
    200: {
      description: "The node and its desired assignments",
      schema: heartbeatReplySchema,
    },
    ...authErrors,
    ...notFoundError,
  },
});

export const postMetrics = defineContract({
  operationId: "postGpuMetrics",
  method: "POST",
  path: "/api/clusters/metrics",
  summary: "Report GPU metric samples (at most 5,000 per request; counts as a heartbeat)",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  body: metricsBatchBody,
  bodyLimitBytes: 4 * 1024 * 1024,
  rateLimitPerMinute: 600_000,
  responses: {
    202: { description: "Accepted samples stored; rejected ones listed by index", schema: metricsBatchReply },
    413: { description: "More than 5,000 samples, or a body over 4 MiB", schema: errorBodySchema },
    ...authErrors,
  },
});

export const listGpus = defineContract({
  operationId: "listGpus",
  method: "GET",
  path: "/api/gpus",
  summary: "List GPUs (an agent key sees its cluster's)",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  query: listGpusQuery,
  responses: { 200: { description: "GPUs", schema: listOf(gpuJsonSchema) }, ...authErrors },
});

export const getGpu = defineContract({
  operationId: "getGpu",
  method: "GET",
  path: "/api/gpus/{id}",
  summary: "Get a GPU",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  params: idParams,
  responses: { 200: { description: "The GPU", schema: z.object({ gpu: gpuJsonSchema }) }, ...authErrors, ...notFoundError },
});

export const getGpuMetrics = defineContract({
  operationId: "getGpuMetrics",
  method: "GET",
  path: "/api/gpus/{id}/metrics",
  summary: "A GPU's metric series: raw samples for steps under a minute, per-minute rollups otherwise",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  params: idParams,
  query: seriesQuery,
  responses: { 200: { description: "Series", schema: seriesReply }, ...authErrors, ...notFoundError },
});

export const listNodes = defineContract({
  operationId: "listNodes",
  method: "GET",
  path: "/api/nodes",
  summary: "List nodes (an agent key sees its cluster's)",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  query: listNodesQuery,
  responses: { 200: { description: "Nodes", schema: listOf(nodeJsonSchema) }, ...authErrors },
});

export const getNode = defineContract({
  operationId: "getNode",
  method: "GET",
  path: "/api/nodes/{id}",
  summary: "Get a node with its GPUs",
  tags: ["Fleet"],
  access: ["operator", "agent"],
  params: idParams,
  responses: { 200: { description: "The node", schema: nodeWithGpus }, ...authErrors, ...notFoundError },
});

export const updateNode = defineContract({
  operationId: "updateNode",
  method: "PATCH",
  path: "/api/nodes/{id}",
  summary: "Drain, put in maintenance, quarantine or return a node to service",
  tags: ["Fleet"],
  access: ["operator"],
  params: idParams,
  body: updateNodeBody,
  responses: {
    200: { description: "Updated", schema: z.object({ node: nodeJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    409: {
      description:
        "Not allowed from the node's current state (invalid_transition). An offline node can only be sent to maintenance or quarantine: it stays offline and returns in that state (status_before_offline)",
      schema: errorBodySchema,
    },
  },
});

export const dashboard = defineContract({
  operationId: "getDashboard",
  method: "GET",
  path: "/api/dashboard",
  summary: "Fleet KPIs",
  tags: ["Fleet"],
  access: ["operator"],
  responses: {
    200: {
      description: "KPIs",
      schema: z.object({
        gpus_total: z.number(),
        gpus_allocated: z.number(),
        gpus_idle: z.number(),
        gpus_unhealthy: z.number(),
        utilization_avg_pct: z.number().nullable(),
        nodes_online: z.number(),
        nodes_offline: z.number(),
        nodes_quarantined: z.number(),
        jobs_queued: z.number(),
        jobs_running: z.number(),
        jobs_blocked: z.number(),
        alerts_firing: z.number(),
        alerts_critical: z.number(),
        revenue_month_cents: z.number().int(),
        revenue_month_billed_cents: z.number().int(),
        revenue_month_accruing_cents: z.number().int(),
      }),
    },
    ...authErrors,
  },
});
