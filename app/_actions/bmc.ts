"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { deleteBmc } from "@/lib/bmc/delete-bmc";
import { powerNode } from "@/lib/bmc/power-node";
import { putBmc } from "@/lib/bmc/put-bmc";
import { powerBody, putBmcBody } from "@/lib/bmc/schemas";
import { provisionBody } from "@/lib/provisioning/schemas";
import { startProvisioning } from "@/lib/provisioning/start-provisioning";

// The node page's BMC and provisioning forms: the same schemas and use cases as the API's
// PUT /api/nodes/{id}/bmc, POST /api/nodes/{id}/power and POST /api/nodes/{id}/provision.

const bool = (v: string | undefined) => (v === "true" ? true : v === "false" ? false : v);

export const saveBmcAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), bmc: putBmcBody }),
    fromForm: (f) => ({
      id: formText(f, "id"),
      bmc: {
        url: formText(f, "url") ?? "",
        username: formText(f, "username") ?? "",
        password: f.get("password") ?? "",
        verify_tls: bool(formText(f, "verify_tls")),
        ca_pem: formText(f, "ca_pem"),
        system_id: formText(f, "system_id"),
      },
    }),
    access: ["operator"],
  },
  async (actor, { id, bmc }) => {
    const saved = await putBmc(actor, id, bmc);
    return {
      message: `${saved.created ? "Stored" : "Replaced"} the BMC at ${saved.bmc.url}; the password is encrypted and will not be shown again.`,
    };
  },
);

export const removeBmcAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator"] },
  async (actor, { id }) => {
    await deleteBmc(actor, id);
    return { message: "The BMC and its password are forgotten." };
  },
);

export const powerNodeAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), power: powerBody }),
    fromForm: (f) => ({ id: formText(f, "id"), power: { action: formText(f, "action") } }),
    access: ["operator"],
  },
  async (actor, { id, power }) => {
    const r = await powerNode(actor, id, power.action);
    return {
      message: r.reset_type
        ? `The BMC accepted ${r.reset_type} (the system was ${r.power_state_before ?? "in an unreported state"}).`
        : `Nothing to do: the system is already ${r.power_state_before}.`,
    };
  },
);

export const provisionNodeAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), provision: provisionBody }),
    fromForm: (f) => ({ id: formText(f, "id"), provision: { image_url: formText(f, "image_url") ?? "" } }),
    access: ["operator"],
  },
  async (actor, { id, provision }) => {
    await startProvisioning(actor, id, provision);
    return { message: `Provisioning started from ${provision.image_url}. The steps appear below as they run.` };
  },
);
