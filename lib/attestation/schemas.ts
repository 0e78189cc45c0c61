import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";
import { FAILURE_CODES } from "./failures";
import { checkPolicySections, EVIDENCE_SECTIONS, policySections } from "./policy";

// The attestation API's shapes (API.md, "Tenant handover and provisioning"). Evidence fields are
// bounded and checked here, so a huge or malformed quote, log or report is a 400 naming the field
// before anything is stored or any nonce spent.

import { TPM_KINDS, VERDICT_RESULTS } from "./vocabulary";

export { TPM_KINDS, VERDICT_RESULTS };

const strictBase64 = (field: string, maxBytes: number) =>
  z
    .string()
    .max(Math.ceil(maxBytes / 3) * 4, `${field} is at most ${maxBytes} bytes`)
    .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, `${field} must be base64`)
    .refine((v) => v.length > 0, `${field} must not be empty`)
    .transform((v): Buffer => Buffer.from(v, "base64"));

/** A PCR value of any bank (the verifier checks its size against the bank's). */
const pcrValue = z.string().regex(/^(0x)?[0-9a-fA-F]{40,128}$/, "must be a PCR value: 40 to 128 hex digits");
const pem = (what: string) =>
  z
    .string()
    .trim()
    .max(4096)
    .regex(
      /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----$/,
      `must be the ${what}'s public key as PEM (SubjectPublicKeyInfo)`,
    );

export const enrolIdentityBody = z.strictObject({
  ak_public_pem: pem("attestation key"),
  /** what tpm2_readpublic -q writes (hex): the quotes' qualifiedSigner is checked against it */
  ak_qualified_name: z
    .string()
    .regex(/^[0-9a-fA-F]{4,132}$/, "must be the attestation key's qualified name, hex")
    .transform((v) => v.toLowerCase())
    .optional(),
  ek_public_pem: pem("endorsement key").optional(),
  tpm_kind: z.enum(TPM_KINDS).default("tpm"),
});
export type EnrolIdentityInput = z.output<typeof enrolIdentityBody>;

export const identityJsonSchema = z.object({
  node_id: z.string(),
  ak_public_pem: z.string(),
  ak_qualified_name: z.string().nullable(),
  ek_public_pem: z.string().nullable(),
  tpm_kind: z.enum(TPM_KINDS),
  enrolled_at: z.string(),
  enrolled_by: z.string(),
});

export const nonceJsonSchema = z.object({
  nonce: z.string(),
  expires_at: z.string(),
  /** what the agent quotes: the policy's bank and PCRs */
  pcr_bank: z.literal("sha256"),
  pcrs: z.array(z.number().int()),
});

const wipeDevice = z.strictObject({
  device: z.string().trim().min(1).max(200),
  method: z.string().trim().min(1).max(200),
  started_at: z.iso.datetime({ offset: true }),
  finished_at: z.iso.datetime({ offset: true }),
  result: z.enum(["ok", "failed"]),
  message: z.string().max(2000).optional(),
});
export const wipeReportBody = z.strictObject({
  /** the handover the report is for (default: the node's running one) */
  workflow_id: z.uuid().optional(),
  devices: z.array(wipeDevice).min(1, "must list every device the wipe touched").max(512),
});
export type WipeReportInput = z.output<typeof wipeReportBody>;

const gpuReport = z.strictObject({
  uuid: z.string().trim().min(1).max(128),
  index: z.number().int().min(0).max(63).optional(),
  model: z.string().max(200).optional(),
  driver_version: z.string().trim().min(1).max(64),
  vbios_version: z.string().trim().min(1).max(64).optional(),
});

/** The most a boot event log may hold (a large server's is well under 256 KiB). */
export const EVENT_LOG_MAX_BYTES = 2 * 1024 * 1024;

export const evidenceBody = z.strictObject({
  nonce: z.string().regex(/^[0-9a-f]{32,128}$/, "must be the nonce issued, hex"),
  workflow_id: z.uuid().optional(),
  tpm: z.strictObject({
    quote: strictBase64("the quote", 1024),
    signature: strictBase64("the signature", 1024),
    pcrs: z
      .record(
        z.string().regex(/^[a-z0-9_]{1,16}$/, "must be a PCR bank name, e.g. sha256"),
        z.record(z.string().regex(/^(?:[0-9]|1[0-9]|2[0-3])$/, "must be a PCR index, 0 to 23"), pcrValue),
      )
      .refine((b) => Object.keys(b).length >= 1 && Object.keys(b).length <= 4, "must hold the values of one to four PCR banks"),
  }),
  event_log: strictBase64("the event log", EVENT_LOG_MAX_BYTES).optional(),
  wipe_report: z.strictObject({ devices: z.array(wipeDevice).max(512) }).optional(),
  gpu_reports: z.array(gpuReport).max(64).optional(),
});
export type EvidenceInput = z.output<typeof evidenceBody>;

export const failureJsonSchema = z.object({
  code: z.enum(FAILURE_CODES as [string, ...string[]]),
  severity: z.enum(["critical", "error"]),
  message: z.string(),
  pcr: z.number().int().optional(),
  event: z.number().int().optional(),
  device: z.string().optional(),
  expected: z.string().optional(),
  actual: z.string().optional(),
});

export const attestationJsonSchema = z.object({
  id: z.string(),
  node_id: z.string(),
  workflow_id: z.string().nullable(),
  result: z.enum(VERDICT_RESULTS),
  failures: z.array(failureJsonSchema),
  policy: z.string().nullable(),
  policy_version: z.number().int().nullable(),
  pcr_digest: z.string().nullable(),
  tpm_kind: z.enum(TPM_KINDS).nullable(),
  kid: z.string(),
  created_at: z.string(),
  jws: z.string(),
});

export const listAttestationsQuery = z.strictObject({ ...paginationQuery });

export const jwksSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.literal("OKP"),
      crv: z.literal("Ed25519"),
      kid: z.string(),
      x: z.string(),
      use: z.string().optional(),
      alg: z.string().optional(),
    }),
  ),
});

// ---- policies ----------------------------------------------------------------------------------

export const policyName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "must be 1–63 letters, digits, dots, dashes or underscores");

/** POST /api/attestation/policies: a name and the first version's sections (a missing section is a 400 naming it). */
export const createPolicyBody = z
  .strictObject({ name: policyName, description: z.string().trim().max(500).optional(), ...policySections })
  .superRefine(checkPolicySections);
export type CreatePolicyInput = z.output<typeof createPolicyBody>;

/**
 * PATCH /api/attestation/policies/{id}: a new version, every section again (a version is whole,
 * never a patch of the last one), and optionally a new description.
 */
export const updatePolicyBody = z
  .strictObject({ description: z.string().trim().max(500).optional(), ...policySections })
  .superRefine(checkPolicySections);
export type UpdatePolicyInput = z.output<typeof updatePolicyBody>;

const policyVersionJsonSchema = z.object({
  version: z.number().int(),
  created_at: z.string(),
  created_by: z.string(),
  pcr_bank: z.literal("sha256"),
  pcrs: z.record(z.string(), z.string()),
  require: z.array(z.enum(EVIDENCE_SECTIONS)),
  events: z
    .array(z.object({ pcr: z.number(), digest: z.string(), type: z.string().optional(), description: z.string().optional() }))
    .optional(),
  gpu: z.object({ driver_versions: z.array(z.string()), vbios_versions: z.array(z.string()).optional() }).optional(),
  images: z.array(z.string()).optional(),
});

export const policyJsonSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  /** the current version's sections */
  current: policyVersionJsonSchema,
  /** every version, newest first (in GET of one policy) */
  versions: z.array(policyVersionJsonSchema).optional(),
  /** the clusters that name it */
  clusters: z.array(z.object({ id: z.string(), name: z.string() })),
});
