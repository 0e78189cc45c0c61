import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { createPodBody, listPodsQuery, podEventsReply, podJsonSchema, reportPodStatusBody } from "@/lib/pods/schemas";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

// Interactive GPU pods (API.md, "Workload access").

const podReply = z.object({ pod: podJsonSchema });
const transitionError = {
  409: { description: "The pod's state does not allow it (invalid_transition)", schema: errorBodySchema },
} as const;

export const createPod = defineContract({
  operationId: "createPod",
  method: "POST",
  path: "/api/pods",
  summary: "Create a pod: a long-lived container on GPUs of one node, with published ports and an SSH key",
  description:
    "The pod is pending until a scheduling cycle places it (at once when GPUs and quota allow), under the same allocator and quota as jobs and replicas. " +
    "Operators name the tenant. 422 when it could never run (more GPUs than the quota, or than any one node has); 409 when the tenant has a pod of that name.",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  body: createPodBody,
  responses: {
    201: { description: "Created (pending)", schema: podReply },
    ...authErrors,
    ...conflictError,
    422: { description: "It could never run (unsatisfiable)", schema: errorBodySchema },
  },
});

export const listPods = defineContract({
  operationId: "listPods",
  method: "GET",
  path: "/api/pods",
  summary: "List pods, newest first (a tenant sees its own; terminated ones stay listed)",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  query: listPodsQuery,
  responses: { 200: { description: "Pods", schema: listOf(podJsonSchema) }, ...authErrors },
});

export const getPod = defineContract({
  operationId: "getPod",
  method: "GET",
  path: "/api/pods/{id}",
  summary: "A pod: status, where it runs, its published ports and SSH command, and its cost so far",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The pod", schema: podReply }, ...authErrors, ...notFoundError },
});

export const stopPod = defineContract({
  operationId: "stopPod",
  method: "POST",
  path: "/api/pods/{id}/stop",
  summary: "Stop a pod: its GPUs are released and billing stops at once; its node stops the container",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: { description: "Stopping (or stopped, if it was not placed yet)", schema: podReply },
    ...authErrors,
    ...notFoundError,
    ...transitionError,
  },
});

export const startPod = defineContract({
  operationId: "startPod",
  method: "POST",
  path: "/api/pods/{id}/start",
  summary: "Start a stopped or failed pod: it is placed again, possibly on another node, with a fresh container",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "Pending placement", schema: podReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const terminatePod = defineContract({
  operationId: "terminatePod",
  method: "DELETE",
  path: "/api/pods/{id}",
  summary: "Terminate a pod for good: GPUs released, billing ended, container removed; it stays listed as terminated",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "Terminated", schema: podReply }, ...authErrors, ...notFoundError, ...transitionError },
});

export const listPodEvents = defineContract({
  operationId: "listPodEvents",
  method: "GET",
  path: "/api/pods/{id}/events",
  summary: "Every transition of a pod, newest first, with who and why",
  tags: ["Pods"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "History", schema: podEventsReply }, ...authErrors, ...notFoundError },
});

export const reportPodStatus = defineContract({
  operationId: "reportPodStatus",
  method: "POST",
  path: "/api/pods/{id}/status",
  summary: "The node's agent reports a pod's container: running (with its host ports), exited, or stopped",
  description:
    "Fenced: the attempt and fence of the pod's current placement, on one of the agent's nodes (its node, for a node-bound key). " +
    "A report about any other placement answers 409 stale_report and changes nothing.",
  tags: ["Pods"],
  access: ["agent"],
  params: idParams,
  body: reportPodStatusBody,
  rateLimitPerMinute: 12_000,
  responses: {
    202: { description: "Applied", schema: z.object({ accepted: z.boolean() }) },
    ...authErrors,
    ...notFoundError,
    409: {
      description: "The report names a placement that is no longer current (stale_report); nothing was changed",
      schema: errorBodySchema,
    },
  },
});
