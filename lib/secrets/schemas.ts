import { z } from "zod";
import { TENANT_ROLES } from "@/lib/users/schemas";

const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
export const secretParams = z.strictObject({
  name: z.string().regex(SECRET_NAME, "Upper-case letters, digits and underscore, starting with a letter (at most 64)"),
});
const usableBy = z.enum(TENANT_ROLES).meta({
  description:
    "Who may reference it in a pipeline: tenant_admin (admins only, the default) or tenant_member (every member). A pipeline uses it only while the person or service account that started it may",
});
export const putSecretBody = z
  .strictObject({ value: z.string().min(1, "A secret cannot be empty").max(8192), usable_by: usableBy.default("tenant_admin") })
  .meta({
    id: "PutSecret",
    description: "The value is stored encrypted and never returned",
    example: { value: "sk-live-…", usable_by: "tenant_admin" },
  });
export const secretJsonSchema = z
  .object({ name: z.string(), usable_by: usableBy, created_at: z.string(), updated_at: z.string() })
  .meta({ id: "Secret" });
