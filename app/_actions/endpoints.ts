"use server";
import { redirect } from "next/navigation";
import { z } from "zod";
import { formInt, formNumber, formText, serverAction } from "@/lib/auth/action";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { deleteEndpoint } from "@/lib/endpoints/delete-endpoint";
import { updateEndpoint } from "@/lib/endpoints/update-endpoint";
import { createEndpointKey, revokeEndpointKey } from "@/lib/endpoints/endpoint-keys";
import { createEndpointBody, createEndpointKeyBody, updateEndpointFields } from "@/lib/endpoints/schemas";

const pages = ["/dashboard/endpoints", "/admin/endpoints"];
/** An emptied optional number means "no target". */
const orNull = (f: FormData, name: string) => formNumber(f, name) ?? null;

export const createEndpointAction = serverAction(
  {
    schema: createEndpointBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      model: formText(f, "model") ?? "",
      gpu_type: formText(f, "gpu_type") ?? "",
      gpus_per_replica: formInt(f, "gpus_per_replica"),
      replicas: formInt(f, "replicas"),
      min_replicas: formInt(f, "min_replicas"),
      max_replicas: formInt(f, "max_replicas"),
      sla_p95_ms: formInt(f, "sla_p95_ms"),
      sla_availability_pct: formNumber(f, "sla_availability_pct"),
      autoscale_metric: formText(f, "autoscale_metric") ?? "none",
      autoscale_target: formNumber(f, "autoscale_target"),
      cooldown_s: formInt(f, "cooldown_s") ?? 300,
    }),
    access: ["tenant"],
    revalidate: pages,
  },
  async (actor, input) => {
    const e = await createEndpoint(actor, input);
    // a fresh page for the new endpoint, opened at its top
    redirect(`/dashboard/endpoints/${e.id}?created=1`);
  },
);

export const updateEndpointAction = serverAction(
  {
    schema: z.strictObject({ id: z.uuid(), ...updateEndpointFields }),
    fromForm: (f) => {
      const metric = formText(f, "autoscale_metric") ?? "none";
      return {
        id: formText(f, "id"),
        replicas: formInt(f, "replicas"),
        min_replicas: formInt(f, "min_replicas"),
        max_replicas: formInt(f, "max_replicas"),
        sla_p95_ms: orNull(f, "sla_p95_ms"),
        sla_availability_pct: orNull(f, "sla_availability_pct"),
        autoscale_metric: metric,
        autoscale_target: metric === "none" ? null : orNull(f, "autoscale_target"),
        cooldown_s: formInt(f, "cooldown_s"),
      };
    },
    access: ["operator", "tenant"],
    revalidate: pages,
  },
  async (actor, { id, ...changes }) => {
    const e = await updateEndpoint(actor, id, changes);
    return { message: `Saved. ${e.name} runs ${e.desiredReplicas} replica${e.desiredReplicas === 1 ? "" : "s"}.` };
  },
);

export const stopStartEndpointAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), stopped: z.enum(["true", "false"]) }),
    fromForm: (f) => ({ id: formText(f, "id"), stopped: formText(f, "stopped") }),
    access: ["operator", "tenant"],
    revalidate: pages,
  },
  async (actor, { id, stopped }) => {
    const e = await updateEndpoint(actor, id, { stopped: stopped === "true" });
    return { message: e.stopRequested ? `“${e.name}” stopped; its GPUs are released.` : `“${e.name}” is starting.` };
  },
);

export const deleteEndpointAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), after: z.enum(["/dashboard/endpoints", "/admin/endpoints"]) }),
    fromForm: (f) => ({ id: formText(f, "id"), after: formText(f, "after") }),
    access: ["operator", "tenant"],
    revalidate: pages,
  },
  async (actor, { id, after }) => {
    const e = await deleteEndpoint(actor, id);
    // the endpoint's page is gone: back to the list, which says what was deleted
    redirect(`${after}?deleted=${encodeURIComponent(e.name)}`);
  },
);

/** Tenant admins and operators: a key that calls one endpoint through the gateway, shown once. */
export const createEndpointKeyAction = serverAction(
  {
    schema: createEndpointKeyBody.extend({ endpoint_id: z.uuid() }),
    fromForm: (f) => ({ endpoint_id: formText(f, "endpoint_id"), name: formText(f, "name") ?? "" }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { endpoint_id, ...input }) => {
    const { endpointKey, key } = await createEndpointKey(actor, endpoint_id, input);
    return {
      message: `Key “${endpointKey.name}” created. Copy it now: it is not shown again. It calls this endpoint and nothing else.`,
      data: { key, prefix: endpointKey.prefix },
    };
  },
);

export const revokeEndpointKeyAction = serverAction(
  {
    schema: z.object({ endpoint_id: z.uuid(), id: z.uuid() }),
    fromForm: (f) => ({ endpoint_id: formText(f, "endpoint_id"), id: formText(f, "id") }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { endpoint_id, id }) => {
    const k = await revokeEndpointKey(actor, endpoint_id, id);
    return { message: `Key ${k.prefix}… revoked; the gateway refuses it from the next request.` };
  },
);
