"use server";
import { z } from "zod";
import { formNumber, formText, serverAction } from "@/lib/auth/action";
import { capturePolicyFromNode } from "@/lib/attestation/capture-policy";
import { createPolicy } from "@/lib/attestation/create-policy";
import { checkPolicySections, EVIDENCE_SECTIONS, policySections } from "@/lib/attestation/policy";
import { retireIdentity } from "@/lib/attestation/retire-identity";
import { policyName } from "@/lib/attestation/schemas";
import { updatePolicy } from "@/lib/attestation/update-policy";
import { handoverSettingsBody } from "@/lib/handover/schemas";
import { putHandoverSettings } from "@/lib/handover/settings";
import { startHandover } from "@/lib/handover/start-handover";

// The console's handover actions on a node: a handover or a re-inspection by hand (always saying
// why), and the re-enrolment of a node whose TPM or board was replaced.

const reason = z.string({ error: "Say why, in a few words" }).trim().min(3, "Say why, in a few words").max(500);

export const startHandoverAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), mode: z.enum(["full", "inspect"]), reason }),
    fromForm: (f) => ({ id: formText(f, "id"), mode: formText(f, "mode"), reason: formText(f, "reason") }),
    access: ["operator"],
    revalidate: ["/admin", "/admin/clusters"],
  },
  async (actor, { id, mode, reason }) => {
    await startHandover(actor, id, { mode, reason });
    return {
      message:
        mode === "inspect"
          ? "Re-inspection started: the node's agent attests it again; it returns to service only if it passes."
          : "Handover started: the node is released, wiped and inspected, and returns to service only if it passes.",
    };
  },
);

export const retireIdentityAction = serverAction(
  {
    schema: z.object({ id: z.uuid() }),
    fromForm: (f) => ({ id: formText(f, "id") }),
    access: ["operator"],
    revalidate: ["/admin/clusters"],
  },
  async (actor, { id }) => {
    await retireIdentity(actor, id);
    return { message: "The pinned attestation key was retired: the next key the node presents is pinned." };
  },
);

// ---- attestation policies and cluster settings -----------------------------------------------

/** A policy's sections as the operator writes them: JSON, checked by the same schema as the API. */
const sectionsJson = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `Not JSON: ${(e as Error).message}` });
      return z.NEVER;
    }
  })
  .pipe(z.strictObject(policySections).superRefine(checkPolicySections));

export const createPolicyAction = serverAction(
  {
    schema: z.object({ name: policyName, description: z.string().trim().max(500).optional(), sections: sectionsJson }),
    fromForm: (f) => ({ name: formText(f, "name"), description: formText(f, "description"), sections: formText(f, "sections") }),
    access: ["operator"],
    revalidate: ["/admin/attestation"],
  },
  async (actor, { name, description, sections }) => {
    const policy = await createPolicy(actor, { name, description, ...sections });
    return { message: `Policy ${policy.name} created at version 1.`, data: { id: policy.id } };
  },
);

export const capturePolicyAction = serverAction(
  {
    schema: z.object({
      node_id: z.uuid("Pick a node"),
      name: policyName,
      require: z.array(z.enum(EVIDENCE_SECTIONS)),
    }),
    fromForm: (f) => ({ node_id: formText(f, "node_id"), name: formText(f, "name"), require: f.getAll("require").map(String) }),
    access: ["operator"],
    revalidate: ["/admin/attestation"],
  },
  async (actor, input) => {
    const policy = await capturePolicyFromNode(actor, input);
    return {
      message: `Policy ${policy.name} captured: ${Object.keys(policy.current.pcrs).length} PCRs, ${policy.current.events?.length ?? 0} known events.`,
      data: { id: policy.id },
    };
  },
);

export const newPolicyVersionAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), description: z.string().trim().max(500).optional(), sections: sectionsJson }),
    fromForm: (f) => ({ id: formText(f, "id"), description: formText(f, "description"), sections: formText(f, "sections") }),
    access: ["operator"],
    revalidate: ["/admin/attestation"],
  },
  async (actor, { id, description, sections }) => {
    const policy = await updatePolicy(actor, id, { description, ...sections });
    return { message: `Version ${policy.version} of ${policy.name} is in force: nodes are judged by it from their next attestation.` };
  },
);

export const putHandoverSettingsAction = serverAction(
  {
    schema: z.object({ cluster_id: z.uuid(), settings: handoverSettingsBody }),
    fromForm: (f) => ({
      cluster_id: formText(f, "cluster_id"),
      settings: {
        wipe_command: formText(f, "wipe_command")?.trim() ?? null,
        wipe_timeout_s: formNumber(f, "wipe_timeout_s"),
        attestation: formText(f, "attestation"),
        attestation_policy_id: formText(f, "attestation_policy_id") ?? null,
        attestation_timeout_s: formNumber(f, "attestation_timeout_s"),
      },
    }),
    access: ["operator"],
    revalidate: ["/admin/clusters"],
  },
  async (actor, { cluster_id, settings }) => {
    const s = await putHandoverSettings(actor, cluster_id, settings);
    return {
      message:
        s.attestation === "off"
          ? "Saved. Attestation is off: nodes of this cluster return to service after their wipe without proof."
          : s.attestation_policy
            ? `Saved. Nodes are attested against ${s.attestation_policy} between tenants.`
            : "Saved. No policy is named: every attestation of this cluster's nodes fails until one is.",
    };
  },
);
