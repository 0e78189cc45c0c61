import { z } from "zod";

const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
export const secretParams = z.strictObject({
  name: z.string().regex(SECRET_NAME, "Upper-case letters, digits and underscore, starting with a letter (at most 64)"),
});
export const putSecretBody = z
  .strictObject({ value: z.string().min(1, "A secret cannot be empty").max(8192) })
  .meta({ id: "PutSecret", description: "The value is stored encrypted and never returned", example: { value: "sk-live-…" } });
export const secretJsonSchema = z.object({ name: z.string(), created_at: z.string(), updated_at: z.string() }).meta({ id: "Secret" });
