import { z } from "zod";
import { STEP_STATUSES, WORKFLOW_KINDS, WORKFLOW_STATUSES, WORKFLOW_TRIGGERS } from "@/lib/fleet/workflow-vocabulary";

// The handover API's shapes (API.md, "Tenant handover and provisioning").

const HANDOVER_MODES = ["full", "inspect"] as const;

export const startHandoverBody = z.strictObject({
  /** full: release, wipe, inspect; inspect: attest again only (a re-inspection after an operator looked at the node) */
  mode: z.enum(HANDOVER_MODES).default("full"),
  reason: z.string().trim().min(1).max(500).optional(),
});
export type StartHandoverInput = z.output<typeof startHandoverBody>;

export const handoverSettingsBody = z.strictObject({
  wipe_command: z
    .string()
    .trim()
    .min(1)
    .max(4000)
    .refine((v) => !v.includes("\0"), "must not contain NUL")
    .nullable(),
  wipe_timeout_s: z.number().int().min(30).max(86_400).default(1800),
  attestation: z.enum(["required", "off"]).default("required"),
  attestation_policy_id: z.uuid().nullable().default(null),
  attestation_timeout_s: z.number().int().min(30).max(86_400).default(600),
});
export type HandoverSettingsInput = z.output<typeof handoverSettingsBody>;

export const handoverSettingsJsonSchema = z.object({
  cluster_id: z.string(),
  wipe_command: z.string().nullable(),
  wipe_timeout_s: z.number().int(),
  attestation: z.enum(["required", "off"]),
  attestation_policy_id: z.string().nullable(),
  attestation_policy: z.string().nullable(),
  attestation_timeout_s: z.number().int(),
  updated_by: z.string().nullable(),
  updated_at: z.string().nullable(),
});

const workflowStepJsonSchema = z.object({
  name: z.string(),
  status: z.enum(STEP_STATUSES),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  message: z.string().nullable(),
  lease_token: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
});

export const workflowJsonSchema = z.object({
  id: z.string(),
  node_id: z.string(),
  kind: z.enum(WORKFLOW_KINDS),
  status: z.enum(WORKFLOW_STATUSES),
  trigger: z.enum(WORKFLOW_TRIGGERS),
  reason: z.string(),
  requested_by: z.string(),
  details: z.record(z.string(), z.unknown()),
  outcome: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  steps: z.array(workflowStepJsonSchema),
});

const wipeDeviceJsonSchema = z.object({
  device: z.string(),
  method: z.string(),
  started_at: z.string(),
  finished_at: z.string(),
  result: z.enum(["ok", "failed"]),
  message: z.string().optional(),
});

export const wipeReportJsonSchema = z.object({
  id: z.string(),
  node_id: z.string(),
  workflow_id: z.string(),
  result: z.enum(["ok", "failed"]),
  devices: z.array(wipeDeviceJsonSchema),
  created_at: z.string(),
});

/** What a heartbeat tells a node in a handover to do (absent: nothing). */
export const handoverInstructionSchema = z
  .object({
    workflow_id: z.string(),
    action: z.enum(["wipe", "attest"]),
    /** wipe: the operator's command to run on the host (null: GPU resets only), and its time limit */
    wipe: z.object({ command: z.string().nullable(), timeout_s: z.number().int() }).optional(),
    /** attest: where the nonce, the identity and the evidence go */
    attest: z.object({ identity_path: z.string(), nonce_path: z.string(), evidence_path: z.string() }).optional(),
    report_path: z.string().optional(),
  })
  .meta({
    description:
      "A handover step for the agent: `wipe` runs the cluster's wipe command on the host and resets the GPUs, then posts the per-device report to report_path; `attest` enrols the TPM's attestation key, takes a nonce, quotes and posts the evidence",
  });
export type HandoverInstruction = z.output<typeof handoverInstructionSchema>;
