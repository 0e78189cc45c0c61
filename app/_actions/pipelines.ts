"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { validationFailed } from "@/lib/errors";
import { cancelPipeline } from "@/lib/pipelines/cancel-pipeline";
import { createPipeline } from "@/lib/pipelines/create-pipeline";
import { parseSpecText } from "@/lib/pipelines/editor";
import { retryPipelineStep } from "@/lib/pipelines/retry-step";
import { deleteSecret, putSecret } from "@/lib/secrets/secrets";
import { putSecretBody, secretParams } from "@/lib/secrets/schemas";

const pages = ["/dashboard/pipelines"];

export const createPipelineAction = serverAction(
  {
    schema: z.object({ spec: z.string().max(256 * 1024, "At most 256 KiB"), format: z.enum(["yaml", "json"]) }),
    fromForm: (f) => ({ spec: formText(f, "spec") ?? "", format: formText(f, "format") ?? "yaml" }),
    access: ["tenant"],
    revalidate: pages,
  },
  async (actor, { spec, format }) => {
    const parsed = parseSpecText(spec, format);
    if (parsed.error) throw validationFailed([{ path: "spec", message: parsed.error }], parsed.error);
    const p = await createPipeline(actor, parsed.value as never);
    return { message: `“${p.name}” started.`, data: { id: p.id } };
  },
);

const idAndStep = z.object({ id: z.uuid(), step: z.string().min(1).max(100).optional() });

export const cancelPipelineAction = serverAction(
  { schema: idAndStep, fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator", "tenant"], revalidate: pages },
  async (actor, { id }) => {
    const p = await cancelPipeline(actor, id);
    return { message: `“${p.name}” cancelled.` };
  },
);

export const retryStepAction = serverAction(
  {
    schema: idAndStep.required(),
    fromForm: (f) => ({ id: formText(f, "id"), step: formText(f, "step") }),
    access: ["operator", "tenant"],
    revalidate: pages,
  },
  async (actor, { id, step }) => {
    await retryPipelineStep(actor, id, step);
    return { message: `Step “${step}” runs again.` };
  },
);

export const putSecretAction = serverAction(
  {
    schema: secretParams.extend(putSecretBody.shape),
    fromForm: (f) => ({ name: formText(f, "name") ?? "", value: formText(f, "value") ?? "", usable_by: formText(f, "usable_by") }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { name, value, usable_by }) => {
    const r = await putSecret(actor, name, value, usable_by);
    const who = usable_by === "tenant_member" ? "every member's pipelines may use it" : "only admins' pipelines may use it";
    return { message: `Secret ${name} ${r.created ? "added" : "replaced"}; ${who}.` };
  },
);

export const deleteSecretAction = serverAction(
  {
    schema: secretParams,
    fromForm: (f) => ({ name: formText(f, "name") ?? "" }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { name }) => {
    await deleteSecret(actor, name);
    return { message: `Secret ${name} deleted.` };
  },
);
