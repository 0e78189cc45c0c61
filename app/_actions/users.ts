"use server";
import { z } from "zod";
import { formText, serverAction } from "@/lib/auth/action";
import { createUser } from "@/lib/users/create-user";
import { createUserBody, updateUserBody } from "@/lib/users/schemas";
import { updateUser } from "@/lib/users/update-user";

const pages = ["/dashboard/users", "/admin/tenants", "/admin/users"];

export const createUserAction = serverAction(
  {
    schema: createUserBody,
    fromForm: (f) => ({
      email: formText(f, "email") ?? "",
      name: formText(f, "name") ?? "",
      password: formText(f, "password") ?? "",
      role: formText(f, "role"),
      tenant_id: formText(f, "tenant_id"),
    }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, input) => {
    const user = await createUser(actor, input);
    return { message: `${user.name} can now sign in as ${user.email}.` };
  },
);

export const updateUserAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), changes: updateUserBody }),
    fromForm: (f) => {
      const changes: Record<string, unknown> = {};
      if (f.has("role")) changes.role = formText(f, "role");
      if (f.has("disabled")) changes.disabled = formText(f, "disabled") === "true";
      if (f.has("name")) changes.name = formText(f, "name") ?? "";
      return { id: formText(f, "id"), changes };
    },
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { id, changes }) => {
    const user = await updateUser(actor, id, changes);
    return { message: `${user.name} ${changes.disabled === true ? "disabled" : changes.disabled === false ? "enabled" : "updated"}.` };
  },
);
