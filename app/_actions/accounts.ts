"use server";
import { headers } from "next/headers";
import { z } from "zod";
import { changeOwnPassword } from "@/lib/accounts/change-password";
import { confirmPasswordReset, requestPasswordReset } from "@/lib/accounts/password-reset";
import {
  beginTwoFactorEnrolment,
  confirmTwoFactorEnrolment,
  disableTwoFactor,
  regenerateRecoveryCodes,
  resetTwoFactor,
} from "@/lib/accounts/two-factor";
import { accounts } from "@/lib/api/contracts";
import { formText, serverAction } from "@/lib/auth/action";
import { MAX_PASSWORD_LENGTH } from "@/lib/auth/password-policy";
import { clientIp } from "@/lib/http/route";
import { discardSignup } from "@/lib/signup/discard-signup";
import { discardSignupBody, passwordResetBody, passwordResetConfirmBody, signupBody, verifyEmailForm } from "@/lib/signup/schemas";
import { signUp } from "@/lib/signup/sign-up";
import { verifyEmail } from "@/lib/signup/verify-email";

// The account forms: the public ones (sign up, confirm, discard, reset) with the API's schemas and
// per-address limits (every submission counts, valid or not), and the signed-in user's own
// security (password, two-factor sign-in).

const limitOf = (c: { operationId: string; rateLimitPerMinute?: number }) => ({ key: c.operationId, perMinute: c.rateLimitPerMinute! });
const visitor = async () => ({ address: clientIp(await headers()) });

export const signUpAction = serverAction(
  {
    schema: signupBody,
    fromForm: (f) => ({
      email: formText(f, "email") ?? "",
      password: (f.get("password") as string | null) ?? "",
      company: formText(f, "company") ?? "",
    }),
    access: "public",
    rateLimit: limitOf(accounts.signUp),
  },
  async (_actor, input) => {
    await signUp(input);
    return { message: `Check your inbox: we sent a link to ${input.email}. Follow it to finish signing up.`, data: { email: input.email } };
  },
);

export const verifyEmailAction = serverAction(
  {
    schema: verifyEmailForm,
    fromForm: (f) => ({ token: formText(f, "token") ?? "", password: (f.get("password") as string | null) ?? "" }),
    access: "public",
    rateLimit: limitOf(accounts.verifyEmail),
  },
  async (_actor, input) => {
    const { email } = await verifyEmail(input, await visitor());
    return { message: `Your address ${email} is confirmed. You can sign in now.`, data: { email } };
  },
);

export const discardSignupAction = serverAction(
  {
    schema: discardSignupBody,
    fromForm: (f) => ({ token: formText(f, "token") ?? "" }),
    access: "public",
    rateLimit: limitOf(accounts.discardSignup),
  },
  async (_actor, input) => {
    await discardSignup(input.token);
    return { message: "The unconfirmed account was removed. You can sign up with your address now." };
  },
);

export const requestPasswordResetAction = serverAction(
  {
    schema: passwordResetBody,
    fromForm: (f) => ({ email: formText(f, "email") ?? "" }),
    access: "public",
    rateLimit: limitOf(accounts.requestPasswordReset),
  },
  async (_actor, input) => {
    await requestPasswordReset(input.email);
    return { message: `If ${input.email} has an account, a link to reset its password is on its way. It works once, within the hour.` };
  },
);

export const confirmPasswordResetAction = serverAction(
  {
    schema: passwordResetConfirmBody,
    fromForm: (f) => ({ token: formText(f, "token") ?? "", password: (f.get("password") as string | null) ?? "" }),
    access: "public",
    rateLimit: limitOf(accounts.confirmPasswordReset),
  },
  async (_actor, input) => {
    const { email } = await confirmPasswordReset(input.token, input.password, await visitor());
    return { message: "Your password is changed, and every browser was signed out. Sign in with the new one.", data: { email } };
  },
);

const newPassword = z.string().min(1, "Choose a new password").max(MAX_PASSWORD_LENGTH);

export const changePasswordAction = serverAction(
  {
    schema: z.strictObject({
      current_password: z.string().min(1, "Your current password").max(MAX_PASSWORD_LENGTH),
      password: newPassword,
    }),
    fromForm: (f) => ({
      current_password: (f.get("current_password") as string | null) ?? "",
      password: (f.get("password") as string | null) ?? "",
    }),
    access: ["operator", "tenant"],
    duringTwoFactorEnrolment: true,
  },
  async (actor, input) => {
    await changeOwnPassword(actor, input, await visitor());
    return { message: "Password changed. Every browser was signed out, this one too: sign in with the new password." };
  },
);

export const beginTwoFactorAction = serverAction(
  { schema: z.object({}), fromForm: () => ({}), access: ["operator", "tenant"], duringTwoFactorEnrolment: true },
  async (actor) => {
    const e = await beginTwoFactorEnrolment(actor);
    return { message: "Scan the code with your authenticator app, then type the code it shows.", data: e };
  },
);

const code = z.string().trim().min(6, "The 6-digit code, or a recovery code").max(40);

export const confirmTwoFactorAction = serverAction(
  {
    schema: z.strictObject({ code, password: z.string().min(1, "Your password").max(MAX_PASSWORD_LENGTH) }),
    fromForm: (f) => ({ code: formText(f, "code") ?? "", password: (f.get("password") as string | null) ?? "" }),
    access: ["operator", "tenant"],
    duringTwoFactorEnrolment: true,
  },
  async (actor, input) => {
    const { recoveryCodes } = await confirmTwoFactorEnrolment(actor, input);
    return { message: "Two-factor sign-in is on.", data: { recoveryCodes } };
  },
);

export const regenerateRecoveryCodesAction = serverAction(
  { schema: z.strictObject({ code }), fromForm: (f) => ({ code: formText(f, "code") ?? "" }), access: ["operator", "tenant"] },
  async (actor, input) => {
    const { recoveryCodes } = await regenerateRecoveryCodes(actor, input.code);
    return { message: "New recovery codes: the old ones no longer work.", data: { recoveryCodes } };
  },
);

export const disableTwoFactorAction = serverAction(
  {
    schema: z.strictObject({ password: z.string().min(1, "Your password").max(MAX_PASSWORD_LENGTH), code }),
    fromForm: (f) => ({ password: (f.get("password") as string | null) ?? "", code: formText(f, "code") ?? "" }),
    access: ["operator", "tenant"],
  },
  async (actor, input) => {
    await disableTwoFactor(actor, input);
    return { message: "Two-factor sign-in is off." };
  },
);

export const resetTwoFactorAction = serverAction(
  {
    schema: z.object({ user_id: z.uuid("Must be a user id") }),
    fromForm: (f) => ({ user_id: formText(f, "user_id") }),
    access: ["operator", "tenant"],
    tenantRole: "tenant_admin",
    revalidate: ["/dashboard/users", "/admin/tenants"],
  },
  async (actor, input) => {
    await resetTwoFactor(actor, input.user_id);
    return { message: "Two-factor sign-in was reset; the user signs in with the password and enrols again." };
  },
);
