import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import {
  createEndpointBody,
  endpointJsonSchema,
  endpointMetricsBody,
  endpointSeriesSchema,
  listEndpointsQuery,
  replicaAddressBody,
  createEndpointKeyBody,
  endpointKeyJsonSchema,
  slaJsonSchema,
  timeWindowQuery,
  updateEndpointBody,
} from "@/lib/endpoints/schemas";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

const endpointReply = z.object({ endpoint: endpointJsonSchema });
const unsatisfiableError = {
  422: { description: "The endpoint can never run (unsatisfiable): quota or per-node capacity", schema: errorBodySchema },
} as const;

export const createEndpoint = defineContract({
  operationId: "createEndpoint",
  method: "POST",
  path: "/api/endpoints",
  summary: "Create an inference endpoint; its replicas are placed at once where GPUs and quota allow",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  body: createEndpointBody,
  responses: { 201: { description: "Created", schema: endpointReply }, ...authErrors, ...conflictError, ...unsatisfiableError },
});

export const listEndpoints = defineContract({
  operationId: "listEndpoints",
  method: "GET",
  path: "/api/endpoints",
  summary: "List endpoints (a tenant sees its own)",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  query: listEndpointsQuery,
  responses: { 200: { description: "Endpoints, newest first", schema: listOf(endpointJsonSchema) }, ...authErrors },
});

export const getEndpoint = defineContract({
  operationId: "getEndpoint",
  method: "GET",
  path: "/api/endpoints/{id}",
  summary: "An endpoint with its replicas, their nodes and GPUs",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The endpoint", schema: endpointReply }, ...authErrors, ...notFoundError },
});

export const updateEndpoint = defineContract({
  operationId: "updateEndpoint",
  method: "PATCH",
  path: "/api/endpoints/{id}",
  summary: "Scale, change SLA targets or autoscaling, stop or start an endpoint",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  body: updateEndpointBody,
  responses: {
    200: { description: "Updated; replicas already follow", schema: endpointReply },
    ...authErrors,
    ...notFoundError,
    ...unsatisfiableError,
  },
});

export const deleteEndpoint = defineContract({
  operationId: "deleteEndpoint",
  method: "DELETE",
  path: "/api/endpoints/{id}",
  summary: "Delete an endpoint: replicas stop, GPUs are released, billing ends",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 204: { description: "Deleted" }, ...authErrors, ...notFoundError },
});

export const postEndpointMetrics = defineContract({
  operationId: "postEndpointMetrics",
  method: "POST",
  path: "/api/endpoints/{id}/metrics",
  summary: "Report serving samples (requests, errors, latency percentiles, tokens/s, health) of an endpoint's replicas",
  description:
    "Tenants and operators report for any replica of the endpoint. Agents name each replica's placement with its fence and may report only for replicas on their own nodes. " +
    "A serving container reports with its replica's report token (from the agent), which covers its own replica only.",
  tags: ["Endpoints"],
  access: ["operator", "tenant", "agent", "workload"],
  params: idParams,
  body: endpointMetricsBody,
  bodyLimitBytes: 1024 * 1024,
  rateLimitPerMinute: 60_000,
  responses: {
    202: {
      description: "Accepted samples stored; rejected ones listed by index",
      schema: z.object({ accepted: z.number(), rejected: z.array(z.object({ index: z.number(), error: z.string() })) }),
    },
    ...authErrors,
    ...notFoundError,
    409: {
      description: "An agent's sample names a replica placement that is no longer current (stale_report); nothing was stored",
      schema: errorBodySchema,
    },
  },
});

export const getEndpointMetrics = defineContract({
  operationId: "getEndpointMetrics",
  method: "GET",
  path: "/api/endpoints/{id}/metrics",
  summary: "Per-minute throughput, errors, latency and tokens/s (default: the last hour)",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  query: timeWindowQuery,
  responses: { 200: { description: "The series", schema: endpointSeriesSchema }, ...authErrors, ...notFoundError },
});

export const getEndpointSla = defineContract({
  operationId: "getEndpointSla",
  method: "GET",
  path: "/api/endpoints/{id}/sla",
  summary: "Availability, p95 compliance and error budget over a window (default: the last 24 hours)",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  query: timeWindowQuery,
  responses: { 200: { description: "The SLA report", schema: z.object({ sla: slaJsonSchema }) }, ...authErrors, ...notFoundError },
});

export const listEndpointEvents = defineContract({
  operationId: "listEndpointEvents",
  method: "GET",
  path: "/api/endpoints/{id}/events",
  summary: "Status transitions and scaling decisions, newest first",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: {
      description: "History",
      schema: z.object({
        transitions: z.array(
          z.object({
            from_status: z.string().nullable(),
            to_status: z.string(),
            reason: z.string(),
            actor: z.string(),
            created_at: z.string(),
          }),
        ),
        scaling: z.array(
          z.object({
            from_replicas: z.number(),
            to_replicas: z.number(),
            metric: z.string(),
            observed: z.number().nullable(),
            target: z.number().nullable(),
            outcome: z.string(),
            reason: z.string(),
            created_at: z.string(),
          }),
        ),
      }),
    },
    ...authErrors,
    ...notFoundError,
  },
});

export const reportReplicaAddress = defineContract({
  operationId: "reportReplicaAddress",
  method: "POST",
  path: "/api/endpoints/{id}/replicas/{replica_id}/address",
  summary: "The agent of a replica's node reports the host port it published the serving port on",
  description:
    "Fenced: the replica's fence and attempt 1, while it is live, from the agent of its own node (its node, for a node-bound key). " +
    "Only a port is reported: the inference gateway connects to the node's registered address and nowhere else.",
  tags: ["Endpoints"],
  access: ["agent"],
  params: z.strictObject({ id: z.uuid("Must be an id"), replica_id: z.uuid("Must be a replica id") }),
  body: replicaAddressBody,
  rateLimitPerMinute: 12_000,
  responses: {
    202: { description: "Recorded", schema: z.object({ accepted: z.boolean() }) },
    ...authErrors,
    ...notFoundError,
    409: {
      description: "A stale placement (stale_report), or the port is another live replica's on this node (conflict)",
      schema: errorBodySchema,
    },
  },
});

export const createEndpointKey = defineContract({
  operationId: "createEndpointKey",
  method: "POST",
  path: "/api/endpoints/{id}/keys",
  summary: "Create a key that calls this endpoint through the inference gateway and nothing else; the key is returned only here",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  body: createEndpointKeyBody,
  rateLimitPerMinute: 60,
  responses: {
    201: { description: "Created", schema: z.object({ endpoint_key: endpointKeyJsonSchema, key: z.string() }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const listEndpointKeys = defineContract({
  operationId: "listEndpointKeys",
  method: "GET",
  path: "/api/endpoints/{id}/keys",
  summary: "An endpoint's keys (never the keys themselves)",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  responses: {
    200: { description: "Keys, newest first", schema: z.object({ data: z.array(endpointKeyJsonSchema) }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const revokeEndpointKey = defineContract({
  operationId: "revokeEndpointKey",
  method: "DELETE",
  path: "/api/endpoints/{id}/keys/{key_id}",
  summary: "Revoke an endpoint key: the gateway refuses it from the next request",
  tags: ["Endpoints"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: z.strictObject({ id: z.uuid("Must be an id"), key_id: z.uuid("Must be a key id") }),
  responses: {
    200: { description: "Revoked", schema: z.object({ endpoint_key: endpointKeyJsonSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});
