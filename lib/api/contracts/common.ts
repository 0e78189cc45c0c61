import { z } from "zod";
import { errorBodySchema } from "@/lib/http/error-response";

export const idParams = z.strictObject({ id: z.uuid("Must be an id") });

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() });
}

/** The error replies every authenticated operation can give, for the OpenAPI document. */
export const authErrors = {
  400: { description: "Validation failed; details name each bad field", schema: errorBodySchema },
  401: { description: "Missing, invalid or revoked credentials", schema: errorBodySchema },
  403: { description: "Credentials lack the scope or role", schema: errorBodySchema },
} as const;

export const notFoundError = { 404: { description: "Not found (or another tenant's)", schema: errorBodySchema } } as const;
export const conflictError = { 409: { description: "Conflicts with the current state", schema: errorBodySchema } } as const;
