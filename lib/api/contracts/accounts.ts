import { z } from "zod";
import { signInEventSchema } from "@/lib/accounts/schemas";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import { paginationQuery } from "@/lib/http/pagination";
import { discardSignupBody, passwordResetBody, passwordResetConfirmBody, signupBody, verifyEmailBody } from "@/lib/signup/schemas";
import { authErrors, idParams, listOf, notFoundError } from "./common";

// Self-service accounts: the public forms (sign up, verify, discard, reset a password) and a
// user's sign-in history. The public ones answer the same whatever the address, and count every
// request against the caller's address, valid or not.

const publicErrors = {
  400: { description: "Validation failed; details name each bad field", schema: errorBodySchema },
  429: { description: "Too many requests from this address, or for this email address", schema: errorBodySchema },
} as const;

export const signUp = defineContract({
  operationId: "signUp",
  method: "POST",
  path: "/api/signup",
  summary: "Sign up: a prepaid tenant and its admin, usable once the emailed link is followed",
  description:
    "Public. The answer is 202 whether or not the address already has an account (its owner is mailed either way). The password must be at least 12 characters and not a common one. 403 while self-service sign-up is turned off.",
  tags: ["Accounts"],
  access: "public",
  body: signupBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    202: { description: "A mail is on its way to the address", schema: z.object({ status: z.literal("verification_sent") }) },
    ...publicErrors,
    403: { description: "Self-service sign-up is turned off here", schema: errorBodySchema },
  },
});

export const verifyEmail = defineContract({
  operationId: "verifyEmail",
  method: "POST",
  path: "/api/signup/verify",
  summary: "Verify an address with the token from the sign-up mail (works once)",
  description:
    "Public. The token proves the mailbox; with `password` (the console's page always sends it) it must also be the account's: a wrong one is 400 naming `password` and leaves the token usable (the address's owner who did not sign up discards the sign-up with the same token at POST /api/signup/discard, or resets the password). Wrong passwords count on the account's sign-in throttle (429 past it).",
  tags: ["Accounts"],
  access: "public",
  body: verifyEmailBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    200: { description: "Verified: the account may sign in", schema: z.object({ status: z.literal("verified"), email: z.string() }) },
    ...publicErrors,
  },
});

export const discardSignup = defineContract({
  operationId: "discardSignup",
  method: "POST",
  path: "/api/signup/discard",
  summary: "Discard an unverified sign-up made with your address (the discard or verification token from the mail)",
  tags: ["Accounts"],
  access: "public",
  body: discardSignupBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: { 200: { description: "Removed", schema: z.object({ status: z.literal("discarded") }) }, ...publicErrors },
});

export const requestPasswordReset = defineContract({
  operationId: "requestPasswordReset",
  method: "POST",
  path: "/api/password-reset",
  summary: "Ask for a password reset link (202 whatever the address)",
  tags: ["Accounts"],
  access: "public",
  body: passwordResetBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    202: { description: "If the address has an account, a link is on its way", schema: z.object({ status: z.literal("reset_requested") }) },
    ...publicErrors,
  },
});

export const confirmPasswordReset = defineContract({
  operationId: "confirmPasswordReset",
  method: "POST",
  path: "/api/password-reset/confirm",
  summary: "Set a new password with the token from the reset mail; every browser session of the user ends (API keys stay)",
  tags: ["Accounts"],
  access: "public",
  body: passwordResetConfirmBody,
  bodyLimitBytes: 4 * 1024,
  rateLimitPerMinute: 20,
  responses: {
    200: { description: "The password is changed", schema: z.object({ status: z.literal("password_reset"), email: z.string() }) },
    ...publicErrors,
  },
});

export const listSignIns = defineContract({
  operationId: "listUserSignIns",
  method: "GET",
  path: "/api/users/{id}/sign-ins",
  summary: "A user's sign-in history, newest first (the user, their tenant's admins, operators)",
  tags: ["Users"],
  access: ["operator", "tenant"],
  params: idParams,
  query: z.strictObject({
    limit: paginationQuery.limit,
    cursor: z
      .string()
      .regex(/^\d{1,18}$/, "Must be a sign-in event id")
      .optional(),
  }),
  responses: { 200: { description: "Sign-in attempts", schema: listOf(signInEventSchema) }, ...authErrors, ...notFoundError },
});
