import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import {
  deleteGpuMappingQuery,
  gpuMappingBody,
  gpuMappingJsonSchema,
  instanceJsonSchema,
  jobBurstJsonSchema,
  listInstancesQuery,
  listOffersQuery,
  offerJsonSchema,
  providerJsonSchema,
} from "@/lib/providers/schemas";
import { authErrors, idParams, listOf, notFoundError } from "./common";

// Burst to GPU providers (issue 30): providers, their offers with our price, the GPU-type mapping,
// the instances rented, and a job's burst facts. Operators only, except a job's burst (its tenant).

export const listProviders = defineContract({
  operationId: "listProviders",
  method: "GET",
  path: "/api/providers",
  summary: "GPU providers: enabled (a key configured), offers' age, spend today (their cost), markup, backoff",
  tags: ["Providers"],
  access: ["operator"],
  responses: { 200: { description: "Providers", schema: listOf(providerJsonSchema) }, ...authErrors },
});

export const listProviderOffers = defineContract({
  operationId: "listProviderOffers",
  method: "GET",
  path: "/api/providers/offers",
  summary: "Cached offers with our price (cost × (1 + markup), half up to a cent), cheapest first",
  description: "With gpu_type, only offers mapped to that type; with gpu_count, only offers of at least that many GPUs.",
  tags: ["Providers"],
  access: ["operator"],
  query: listOffersQuery,
  responses: { 200: { description: "Offers", schema: listOf(offerJsonSchema) }, ...authErrors },
});

export const refreshProviderOffers = defineContract({
  operationId: "refreshProviderOffers",
  method: "POST",
  path: "/api/providers/offers/refresh",
  summary: "Ask for every enabled provider's offers now (the background job refreshes them)",
  tags: ["Providers"],
  access: ["operator"],
  rateLimitPerMinute: 12,
  responses: { 202: { description: "Refresh requested", schema: z.object({ requested: z.literal(true) }) }, ...authErrors },
});

export const listGpuMappings = defineContract({
  operationId: "listProviderGpuMappings",
  method: "GET",
  path: "/api/providers/gpu-types",
  summary: "Providers' GPU names and our GPU type for each (the operator's mapping over the built-in one)",
  tags: ["Providers"],
  access: ["operator"],
  responses: { 200: { description: "Mappings", schema: listOf(gpuMappingJsonSchema) }, ...authErrors },
});

export const setGpuMapping = defineContract({
  operationId: "setProviderGpuMapping",
  method: "PUT",
  path: "/api/providers/gpu-types",
  summary: "Map a provider's GPU name to our GPU type (null: never use it); cached offers follow at once",
  tags: ["Providers"],
  access: ["operator"],
  body: gpuMappingBody,
  responses: { 200: { description: "Mapped", schema: z.object({ mapping: gpuMappingJsonSchema }) }, ...authErrors },
});

export const clearGpuMapping = defineContract({
  operationId: "clearProviderGpuMapping",
  method: "DELETE",
  path: "/api/providers/gpu-types",
  summary: "Back to the built-in mapping for a provider's GPU name",
  tags: ["Providers"],
  access: ["operator"],
  query: deleteGpuMappingQuery,
  responses: { 200: { description: "Cleared", schema: z.object({ mapping: gpuMappingJsonSchema }) }, ...authErrors },
});

export const listProviderInstances = defineContract({
  operationId: "listProviderInstances",
  method: "GET",
  path: "/api/providers/instances",
  summary: "Instances rented from providers (newest first, at most 200)",
  tags: ["Providers"],
  access: ["operator"],
  query: listInstancesQuery,
  responses: { 200: { description: "Instances", schema: listOf(instanceJsonSchema) }, ...authErrors },
});

export const getJobBurst = defineContract({
  operationId: "getJobBurst",
  method: "GET",
  path: "/api/jobs/{id}/burst",
  summary: "Why and where a job burst to provider capacity, every attempt, and its estimated cost",
  tags: ["Jobs"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The job's burst", schema: z.object({ burst: jobBurstJsonSchema }) }, ...authErrors, ...notFoundError },
});
