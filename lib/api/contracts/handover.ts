import { z } from "zod";
import {
  attestationJsonSchema,
  createPolicyBody,
  enrolIdentityBody,
  evidenceBody,
  EVENT_LOG_MAX_BYTES,
  identityJsonSchema,
  jwksSchema,
  listAttestationsQuery,
  nonceJsonSchema,
  policyJsonSchema,
  updatePolicyBody,
  wipeReportBody,
} from "@/lib/attestation/schemas";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import {
  handoverSettingsBody,
  handoverSettingsJsonSchema,
  startHandoverBody,
  wipeReportJsonSchema,
  workflowJsonSchema,
} from "@/lib/handover/schemas";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

// Tenant handover and provisioning (API.md): handovers, wipe reports, TPM attestation, verdicts,
// policies and the key set verdicts are signed with.

const AGENT_ONLY =
  "The node's own agent only: a key of the node's cluster, or a key bound to this node. Any other agent key answers 404 (it never learns whether the node exists).";

const transitionError = {
  409: {
    description: "Not allowed from the node's current state (invalid_transition), or a workflow is already running (conflict)",
    schema: errorBodySchema,
  },
} as const;

export const startHandover = defineContract({
  operationId: "startNodeHandover",
  method: "POST",
  path: "/api/nodes/{id}/handover",
  summary: "Send a node through a handover by hand: release, wipe, inspect (or inspect again only)",
  description:
    "mode `full` (default) releases whatever runs on the node, has its agent wipe it and attest it; `inspect` attests an out-of-service node again. The node returns to service only when it passes; a failure quarantines it and alerts.",
  tags: ["Handover"],
  access: ["operator"],
  params: idParams,
  body: startHandoverBody,
  responses: {
    202: { description: "Started", schema: z.object({ handover: workflowJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    ...transitionError,
  },
});

export const listHandovers = defineContract({
  operationId: "listNodeHandovers",
  method: "GET",
  path: "/api/nodes/{id}/handovers",
  summary: "A node's handovers and provisionings with their steps, newest first (the handover timeline)",
  tags: ["Handover"],
  access: ["operator"],
  params: idParams,
  responses: {
    200: { description: "Workflows", schema: z.object({ data: z.array(workflowJsonSchema) }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const getHandoverSettings = defineContract({
  operationId: "getClusterHandoverSettings",
  method: "GET",
  path: "/api/clusters/{id}/handover",
  summary: "A cluster's handover settings: the wipe command and how its nodes are attested",
  tags: ["Handover"],
  access: ["operator"],
  params: idParams,
  responses: {
    200: { description: "Settings", schema: z.object({ handover: handoverSettingsJsonSchema }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const putHandoverSettings = defineContract({
  operationId: "putClusterHandoverSettings",
  method: "PUT",
  path: "/api/clusters/{id}/handover",
  summary: "Set a cluster's wipe command (run on the host by the agent), its time limit, and its attestation policy",
  description:
    "`attestation: off` returns nodes to service after the wipe without proof: an explicit, audited choice. With `required` and no policy, every attestation fails (policy.assignment.missing).",
  tags: ["Handover"],
  access: ["operator"],
  params: idParams,
  body: handoverSettingsBody,
  responses: { 200: { description: "Saved", schema: z.object({ handover: handoverSettingsJsonSchema }) }, ...authErrors, ...notFoundError },
});

export const recordWipe = defineContract({
  operationId: "reportNodeWipe",
  method: "POST",
  path: "/api/nodes/{id}/wipe",
  summary: "The agent's per-device report of the wipe it ran for the node's handover",
  description: `${AGENT_ONLY} Accepted while the node is wiping, once per handover; the same report again answers 200 with the stored one.`,
  tags: ["Handover"],
  access: ["agent"],
  params: idParams,
  body: wipeReportBody,
  rateLimitPerNodePerMinute: 60,
  responses: {
    201: { description: "Stored", schema: z.object({ wipe_report: wipeReportJsonSchema }) },
    200: { description: "Already received (a retry)", schema: z.object({ wipe_report: wipeReportJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    ...transitionError,
  },
});

export const enrolIdentity = defineContract({
  operationId: "enrolAttestationIdentity",
  method: "POST",
  path: "/api/nodes/{id}/attestation/identity",
  summary: "Enrol the node's TPM attestation key (the first is pinned)",
  description: `${AGENT_ONLY} The same key again answers 200; another key is refused (409) and alerts until an operator re-enrols the node.`,
  tags: ["Attestation"],
  access: ["agent"],
  params: idParams,
  body: enrolIdentityBody,
  rateLimitPerNodePerMinute: 30,
  responses: {
    201: { description: "Pinned", schema: z.object({ identity: identityJsonSchema }) },
    200: { description: "Already pinned (the same key)", schema: z.object({ identity: identityJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    409: { description: "Another key is pinned (conflict); an alert was raised", schema: errorBodySchema },
  },
});

export const getIdentity = defineContract({
  operationId: "getAttestationIdentity",
  method: "GET",
  path: "/api/nodes/{id}/attestation/identity",
  summary: "The node's pinned attestation key",
  tags: ["Attestation"],
  access: ["operator"],
  params: idParams,
  responses: {
    200: { description: "The key", schema: z.object({ identity: identityJsonSchema.nullable() }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const retireIdentity = defineContract({
  operationId: "reenrolAttestationIdentity",
  method: "DELETE",
  path: "/api/nodes/{id}/attestation/identity",
  summary: "Re-enrol a node: retire its pinned key so it may enrol another (a replaced TPM or board)",
  tags: ["Attestation"],
  access: ["operator"],
  params: idParams,
  responses: { 204: { description: "Retired" }, ...authErrors, ...notFoundError },
});

export const issueNonce = defineContract({
  operationId: "issueAttestationNonce",
  method: "POST",
  path: "/api/nodes/{id}/attestation/nonce",
  summary: "A single-use nonce to quote over, with the PCRs the node's policy needs",
  description: AGENT_ONLY,
  tags: ["Attestation"],
  access: ["agent"],
  params: idParams,
  rateLimitPerNodePerMinute: 30,
  responses: { 201: { description: "Issued", schema: nonceJsonSchema }, ...authErrors, ...notFoundError },
});

export const submitAttestation = defineContract({
  operationId: "submitAttestationEvidence",
  method: "POST",
  path: "/api/nodes/{id}/attestation",
  summary: "The node's evidence (tpm2_quote's quote and signature, PCRs, boot event log, reports): judged, signed, stored",
  description: `${AGENT_ONLY} A failure is a verdict (201, result fail) listing every failure; malformed evidence (not base64, too large, not a TPMS_ATTEST / TPMT_SIGNATURE / TCG log) is a 400 naming the field and uses up nothing.`,
  tags: ["Attestation"],
  access: ["agent"],
  params: idParams,
  body: evidenceBody,
  bodyLimitBytes: Math.ceil((EVENT_LOG_MAX_BYTES * 4) / 3) + 256 * 1024,
  rateLimitPerNodePerMinute: 30,
  responses: {
    201: { description: "Judged: the signed verdict", schema: z.object({ attestation: attestationJsonSchema }) },
    ...authErrors,
    ...notFoundError,
    413: { description: "The body is larger than the largest evidence", schema: errorBodySchema },
    503: { description: "No signing key is configured: nothing can be attested (unavailable)", schema: errorBodySchema },
  },
});

export const listNodeAttestations = defineContract({
  operationId: "listNodeAttestations",
  method: "GET",
  path: "/api/nodes/{id}/attestations",
  summary: "A node's signed verdicts, newest first (a tenant sees those of nodes it received)",
  tags: ["Attestation"],
  access: ["operator", "tenant"],
  params: idParams,
  query: listAttestationsQuery,
  responses: { 200: { description: "Verdicts", schema: listOf(attestationJsonSchema) }, ...authErrors, ...notFoundError },
});

export const attestationKeys = defineContract({
  operationId: "attestationKeys",
  method: "GET",
  path: "/api/attestation/keys",
  summary: "The JWKS verdicts are signed with (every key that ever signed one, for offline checks)",
  tags: ["Attestation"],
  access: "public",
  responses: { 200: { description: "JWKS", schema: jwksSchema } },
});

export const listPolicies = defineContract({
  operationId: "listAttestationPolicies",
  method: "GET",
  path: "/api/attestation/policies",
  summary: "Attestation policies with their current version",
  tags: ["Attestation"],
  access: ["operator"],
  responses: { 200: { description: "Policies", schema: z.object({ data: z.array(policyJsonSchema) }) }, ...authErrors },
});

export const createPolicy = defineContract({
  operationId: "createAttestationPolicy",
  method: "POST",
  path: "/api/attestation/policies",
  summary: "Create a policy: reference PCR values, the evidence required, known boot events, allowed GPU versions",
  description:
    "Every section is required (`pcr_bank`, `pcrs`, `require`; `events` when the event log is required; `gpu` when GPU reports are): a policy without one is refused (400 naming it), never read as off.",
  tags: ["Attestation"],
  access: ["operator"],
  body: createPolicyBody,
  responses: {
    201: { description: "Created at version 1", schema: z.object({ policy: policyJsonSchema }) },
    ...authErrors,
    ...conflictError,
  },
});

export const getPolicy = defineContract({
  operationId: "getAttestationPolicy",
  method: "GET",
  path: "/api/attestation/policies/{id}",
  summary: "A policy with every version",
  tags: ["Attestation"],
  access: ["operator"],
  params: idParams,
  responses: { 200: { description: "The policy", schema: z.object({ policy: policyJsonSchema }) }, ...authErrors, ...notFoundError },
});

export const updatePolicy = defineContract({
  operationId: "updateAttestationPolicy",
  method: "PATCH",
  path: "/api/attestation/policies/{id}",
  summary: "A new version of a policy (every section again; earlier versions stay, verdicts name theirs)",
  tags: ["Attestation"],
  access: ["operator"],
  params: idParams,
  body: updatePolicyBody,
  responses: { 200: { description: "The new version", schema: z.object({ policy: policyJsonSchema }) }, ...authErrors, ...notFoundError },
});
