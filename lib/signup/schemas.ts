import { z } from "zod";
import { MAX_PASSWORD_LENGTH } from "@/lib/auth/password-policy";
import { MIN_PASSWORD_LENGTH } from "@/lib/auth/password";

// The public account forms' bodies (POST /api/signup, /api/signup/verify, /api/signup/discard, /api/password-reset,
// /api/password-reset/confirm). Strict: a field the form does not have (a role, a tenant, a quota)
// is refused, so a sign-up can only ever be what the service makes of it.

const email = z.email("Must be an email address").max(254, "At most 254 characters").toLowerCase();
const password = z
  .string({ error: "A password is required" })
  .min(MIN_PASSWORD_LENGTH, `At least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `At most ${MAX_PASSWORD_LENGTH} characters`);
const token = z
  .string({ error: "The link's token is required" })
  .min(1, "The link's token is required")
  .max(200, "This is not a token from one of our links");

export const signupBody = z
  .strictObject({
    email,
    password,
    // no control characters: the database refuses a NUL in text (a 500 where the field was meant)
    company: z
      .string({ error: "Your company or team's name" })
      .trim()
      .min(2, "At least 2 characters")
      .max(100, "At most 100 characters")
      .regex(/^\P{Cc}*$/u, "No control characters"),
  })
  .meta({ id: "SignUp", example: { email: "ada@example.com", password: "a long passphrase of yours", company: "Analytical GPU Co" } });

// the account's password beside the link's token: the link proves the mailbox, the password who made the account
const accountPassword = z
  .string({ error: "The account's password is required" })
  .min(1, "The account's password is required")
  .max(MAX_PASSWORD_LENGTH, `At most ${MAX_PASSWORD_LENGTH} characters`);

/**
 * The API's verification: the token (the contract's `{token}`), and the account's password when the
 * client has it (then it must be the one the account was made with).
 */
export const verifyEmailBody = z
  .strictObject({ token, password: accountPassword.optional() })
  .meta({ id: "VerifyEmail", example: { token: "cWx2...43 characters", password: "the passphrase you signed up with" } });

/**
 * The verification page: a person who followed the link types the account's password too, so the
 * owner of an address who did not sign up cannot confirm an account someone else made with it.
 */
export const verifyEmailForm = z.strictObject({ token, password: accountPassword });
export const discardSignupBody = z.strictObject({ token }).meta({ id: "DiscardSignup" });

export const passwordResetBody = z.strictObject({ email }).meta({ id: "PasswordReset", example: { email: "ada@example.com" } });

export const passwordResetConfirmBody = z
  .strictObject({ token, password })
  .meta({ id: "PasswordResetConfirm", example: { token: "cWx2...43 characters", password: "a new long passphrase" } });

export type SignupInput = z.output<typeof signupBody>;
