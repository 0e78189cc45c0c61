import { z } from "zod";
import { REDFISH_FAILURES } from "@/lib/redfish/errors";
import { QUIRKS } from "@/lib/redfish/quirks";

// Provisioning a node through its BMC (API.md, "BMC and provisioning"): the steps it takes, the
// request that starts it and the view of one (pure, importable anywhere).

/** Every provisioning's steps, in order. Each is recorded as a node workflow step of the same name. */
export const PROVISIONING_STEPS = [
  "discover",
  "power_off",
  "eject_media",
  "insert_media",
  "boot_override",
  "power_on",
  "wait_for_agent",
] as const;
export type ProvisioningStep = (typeof PROVISIONING_STEPS)[number];

export const STEP_LABELS: Record<ProvisioningStep, string> = {
  discover: "Discover the system from the service root",
  power_off: "Power off",
  eject_media: "Eject virtual media",
  insert_media: "Insert the image",
  boot_override: "Boot once from the virtual CD",
  power_on: "Power on",
  wait_for_agent: "Wait for the agent to register",
};

/** Why a provisioning failed when it was not the BMC: the agent never came back, or the node has no usable BMC. */
export const PROVISIONING_FAILURES = [...REDFISH_FAILURES, "agent_timeout", "bmc_missing"] as const;
export type ProvisioningFailure = (typeof PROVISIONING_FAILURES)[number];

export const provisionBody = z
  .strictObject({
    image_url: z
      .string({ error: "The image the BMC boots, an http(s) URL of an ISO, e.g. https://images.example/gpu-node-2026.12.iso" })
      .trim()
      .min(1, "The image the BMC boots, an http(s) URL")
      .max(2048, "At most 2048 characters")
      .superRefine((v, ctx) => {
        let u: URL;
        try {
          u = new URL(v);
        } catch {
          ctx.addIssue({ code: "custom", message: "A full http(s) URL the BMC can fetch, e.g. https://images.example/gpu-node.iso" });
          return;
        }
        if (u.protocol !== "http:" && u.protocol !== "https:")
          ctx.addIssue({ code: "custom", message: "An http:// or https:// URL (what BMCs fetch virtual media from)" });
        else if (u.username || u.password)
          ctx.addIssue({
            code: "custom",
            message: "No credentials in the image URL: it is shown on the node page and in the BMC's answers",
          });
        else if (/\s/.test(v)) ctx.addIssue({ code: "custom", message: "No spaces" });
      }),
  })
  .meta({ id: "ProvisionNode", example: { image_url: "https://images.example/gpu-node-2026.12.iso" } });

const exchangeJson = z.object({
  at: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int().nullable(),
  duration_ms: z.number().int(),
  request: z.string().optional(),
  response: z.string().optional(),
  error: z.string().optional(),
  quirk: z.enum(Object.keys(QUIRKS) as [keyof typeof QUIRKS, ...Array<keyof typeof QUIRKS>]).optional(),
  quirk_reason: z.string().optional(),
});

const provisioningStepJson = z.object({
  /** a provisioning step (PROVISIONING_STEPS), or a step of the node's inspection that follows them */
  name: z.string(),
  label: z.string(),
  status: z.enum(["pending", "running", "succeeded", "failed", "skipped"]),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  message: z.string().nullable(),
  /** visits that worked on the step (one per sweep that found it due) */
  attempts: z.number().int(),
  /** the fencing token of the worker that wrote the step last */
  lease_token: z.string().nullable(),
  /** every Redfish request of the step with its answer and timing (the first and last ones when there were many) */
  exchanges: z.array(exchangeJson),
  exchanges_omitted: z.number().int(),
});

export const provisioningJsonSchema = z
  .object({
    id: z.string(),
    node_id: z.string(),
    status: z.enum(["running", "succeeded", "failed", "cancelled"]),
    image_url: z.string(),
    requested_by: z.string(),
    outcome: z.string().nullable(),
    failure: z.object({ kind: z.enum(PROVISIONING_FAILURES), step: z.enum(PROVISIONING_STEPS) }).nullable(),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    /** redfish: its own steps run; inspection: the agent is back and the node is being attested; ended */
    phase: z.enum(["redfish", "inspection", "ended"]),
    current_step: z.string().nullable(),
    steps: z.array(provisioningStepJson),
  })
  .meta({ id: "Provisioning" });
export type ProvisioningJson = z.infer<typeof provisioningJsonSchema>;
export type ProvisioningStepJson = z.infer<typeof provisioningStepJson>;
export type ExchangeJson = z.infer<typeof exchangeJson>;
