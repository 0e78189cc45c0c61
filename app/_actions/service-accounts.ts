"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { createServiceAccountBody } from "@/lib/service-accounts/schemas";
import { createServiceAccount, disableServiceAccount } from "@/lib/service-accounts/service-accounts";

const pages = ["/admin/api-keys", "/dashboard/api-keys"];

export const createServiceAccountAction = serverAction(
  {
    schema: createServiceAccountBody,
    fromForm: (f) => ({
      name: formText(f, "name") ?? "",
      role: formText(f, "role"),
      tenant_id: formText(f, "role") === "operator" ? undefined : formText(f, "tenant_id"),
      description: formText(f, "description"),
    }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, input) => {
    const sa = await createServiceAccount(actor, input);
    return {
      message: `Service account “${sa.name}” created. Make keys for it below: they outlive any one person, and die with the account.`,
    };
  },
);

export const disableServiceAccountAction = serverAction(
  {
    schema: z.object({ id: z.uuid() }),
    fromForm: (f) => ({ id: formText(f, "id") }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { id }) => {
    const sa = await disableServiceAccount(actor, id);
    return { message: `Service account “${sa.name}” disabled; its keys stopped working.` };
  },
);
