import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { jwksSchema } from "@/lib/attestation/schemas";
import { capacityJsonSchema, capacityQuery } from "@/lib/reservations/schemas";

// The read-only public API's operations (npm run public-api). Every one is a GET that needs no
// credentials and reads only the public_api views; there is nothing else to call.

const errors = {
  400: { description: "Validation failed; details name each bad field", schema: errorBodySchema },
  405: { description: "Any method but GET (method_not_allowed)", schema: errorBodySchema },
  429: { description: "Too many requests from your address (rate_limited)", schema: errorBodySchema },
} as const;

const byStatus = z.object({
  available: z.number(),
  registered: z.number(),
  draining: z.number(),
  maintenance: z.number(),
  quarantined: z.number(),
  offline: z.number(),
  // between tenants or being provisioned: not in service until they pass
  provisioning: z.number(),
  releasing: z.number(),
  wiping: z.number(),
  inspecting: z.number(),
  attestation_failed: z.number(),
});
const gpuFigures = { gpus: z.number(), gpus_healthy: z.number(), gpus_busy: z.number() };

export const fleetStatusSchema = z
  .object({
    generated_at: z.string(),
    status: z.enum(["operational", "degraded"]).meta({ description: "degraded while any node is quarantined or offline" }),
    nodes: byStatus,
    ...gpuFigures,
    clusters: z.array(
      z.object({
        cluster_id: z.string(),
        cluster_name: z.string(),
        region: z.string().nullable(),
        nodes: byStatus,
        ...gpuFigures,
        gpu_types: z.array(z.object({ gpu_type: z.string(), ...gpuFigures })),
      }),
    ),
  })
  .meta({ id: "FleetStatus" });

export const publicRemediationSchema = z
  .object({
    id: z.string(),
    at: z.string(),
    cluster_name: z.string(),
    pod: z.string().nullable(),
    action: z.string(),
    outcome: z.string(),
    cause: z.string(),
  })
  .meta({ id: "PublicRemediation", description: "An automatic remediation, without the node, its jobs or their tenants" });

export const publicCapacity = defineContract({
  operationId: "publicCapacity",
  method: "GET",
  path: "/v1/capacity",
  summary: "Free whole nodes and GPUs per cluster, pod and rack for a window",
  tags: ["Public"],
  access: "public",
  query: capacityQuery,
  responses: { 200: { description: "Capacity", schema: z.object({ capacity: capacityJsonSchema }) }, ...errors },
});

export const publicStatus = defineContract({
  operationId: "publicStatus",
  method: "GET",
  path: "/v1/status",
  summary: "The fleet's health: nodes by state and GPUs healthy and busy, per cluster and GPU type",
  tags: ["Public"],
  access: "public",
  query: z.strictObject({}),
  responses: { 200: { description: "Fleet status", schema: fleetStatusSchema }, ...errors },
});

export const publicRemediations = defineContract({
  operationId: "publicRemediations",
  method: "GET",
  path: "/v1/remediations",
  summary: "Recent automatic remediations (quarantines of failing hardware), redacted",
  tags: ["Public"],
  access: "public",
  query: z.strictObject({ limit: z.coerce.number().int().min(1).max(200).default(50), since: z.iso.datetime({ offset: true }).optional() }),
  responses: { 200: { description: "Newest first", schema: z.object({ data: z.array(publicRemediationSchema) }) }, ...errors },
});

export const publicAttestation = defineContract({
  operationId: "publicNodeAttestation",
  method: "GET",
  path: "/v1/nodes/{id}/attestation",
  summary: "A node's latest signed attestation verdict (a compact JWS anyone can check with /v1/attestation/keys)",
  tags: ["Public"],
  access: "public",
  query: z.strictObject({}),
  responses: {
    200: {
      description: "The latest verdict",
      schema: z.object({
        attestation: z.object({
          id: z.string(),
          node_id: z.string(),
          result: z.enum(["pass", "fail"]),
          policy: z.string().nullable(),
          policy_version: z.number().int().nullable(),
          kid: z.string(),
          created_at: z.string(),
          jws: z.string(),
        }),
      }),
    },
    404: { description: "No such node, or it was never attested", schema: errorBodySchema },
    ...errors,
  },
});

export const publicAttestationKeys = defineContract({
  operationId: "publicAttestationKeys",
  method: "GET",
  path: "/v1/attestation/keys",
  summary: "The JWKS attestation verdicts are signed with: every key that ever signed one (rotated-out keys stay)",
  tags: ["Public"],
  access: "public",
  query: z.strictObject({}),
  responses: { 200: { description: "JWKS", schema: jwksSchema }, ...errors },
});

export const publicOpenApi = defineContract({
  operationId: "publicOpenApi",
  method: "GET",
  path: "/v1/openapi.json",
  summary: "This document",
  tags: ["Public"],
  access: "public",
  query: z.strictObject({}),
  responses: { 200: { description: "OpenAPI 3.1" }, ...errors },
});
