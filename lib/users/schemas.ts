import { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password";
import { paginationQuery } from "@/lib/http/pagination";

export const USER_ROLES = ["operator", "tenant_admin", "tenant_member"] as const;
/** The roles inside a tenant (a tenant key carries one: its creator's at most). */
export const TENANT_ROLES = ["tenant_admin", "tenant_member"] as const;

const password = z.string().min(MIN_PASSWORD_LENGTH, `At least ${MIN_PASSWORD_LENGTH} characters`).max(200, "At most 200 characters");

export const createUserBody = z
  .strictObject({
    email: z.email("Must be an email address").max(254).toLowerCase(),
    name: z.string().trim().min(1, "Name is required").max(100),
    password,
    role: z.enum(USER_ROLES),
    tenant_id: z.uuid("Must be a tenant id").optional(),
  })
  .meta({
    id: "CreateUser",
    example: { email: "ada@acme.test", name: "Ada", password: "correct-horse-battery", role: "tenant_member" },
  });

export const updateUserBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    role: z.enum(USER_ROLES).optional(),
    disabled: z.boolean().optional(),
    password: password.optional(),
    // required when you change your own password (a stolen session alone cannot take the account)
    current_password: z.string().min(1).max(200).optional(),
  })
  .refine((b) => Object.keys(b).some((k) => k !== "current_password"), { message: "Send at least one field to change" })
  .meta({ id: "UpdateUser", example: { disabled: true } });

export const listUsersQuery = z.strictObject({ ...paginationQuery, tenant_id: z.uuid().optional() });

export type CreateUserInput = z.output<typeof createUserBody>;
export type UpdateUserInput = z.output<typeof updateUserBody>;

export const userJsonSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(USER_ROLES),
    tenant_id: z.string().nullable(),
    disabled: z.boolean(),
    last_login_at: z.string().nullable(),
    email_verified: z.boolean(),
    two_factor_enabled: z.boolean(),
    created_at: z.string(),
  })
  .meta({ id: "User" });

export const userSelect = {
  id: true,
  email: true,
  name: true,
  role: true,
  tenantId: true,
  disabledAt: true,
  lastLoginAt: true,
  emailVerifiedAt: true,
  totpEnabledAt: true,
  createdAt: true,
} as const;

export type UserRow = Prisma.UserGetPayload<{ select: typeof userSelect }>;

export function userJson(u: UserRow): z.infer<typeof userJsonSchema> {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role as (typeof USER_ROLES)[number],
    tenant_id: u.tenantId,
    disabled: u.disabledAt !== null,
    last_login_at: u.lastLoginAt?.toISOString() ?? null,
    email_verified: u.emailVerifiedAt !== null,
    two_factor_enabled: u.totpEnabledAt !== null,
    created_at: u.createdAt.toISOString(),
  };
}
