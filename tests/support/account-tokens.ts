import { hashToken, newLinkToken } from "@/lib/auth/account-secrets";
import { hashPassword } from "@/lib/auth/password";
import { db } from "@/lib/db/client";
import { unique } from "./fixtures";

// Mailed links' tokens made straight in the database, for walks that need many fresh ones (each
// works once): unverified sign-ups with a verification or discard token, or users with a reset token.

let hash: Promise<string> | undefined;
/** the password of every walk's sign-up and reset user (a verification link takes it beside the token) */
export const WALK_PASSWORD = "walk-signup-passphrase-9";

export async function signupTokens(n: number, purpose: "verify_email" | "discard_signup"): Promise<string[]> {
  hash ??= hashPassword(WALK_PASSWORD);
  const passwordHash = await hash;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const tenant = await db().tenant.create({
      data: {
        name: unique("walk-signup"),
        gpuQuota: 4,
        origin: "signup",
        billingMode: "prepaid",
        signupExpiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    const user = await db().user.create({
      data: {
        email: `${unique("walk-signup")}@walk.test`,
        name: "Walk",
        role: "tenant_admin",
        tenantId: tenant.id,
        passwordHash,
        emailVerifiedAt: null,
      },
    });
    const token = newLinkToken();
    await db().accountToken.create({
      data: { userId: user.id, purpose, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + 86_400_000) },
    });
    out.push(token);
  }
  return out;
}

export async function resetTokens(n: number, tenantId: string): Promise<string[]> {
  hash ??= hashPassword(WALK_PASSWORD);
  const passwordHash = await hash;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const user = await db().user.create({
      data: { email: `${unique("walk-reset")}@walk.test`, name: "Walk", role: "tenant_member", tenantId, passwordHash },
    });
    const token = newLinkToken();
    await db().accountToken.create({
      data: { userId: user.id, purpose: "reset_password", tokenHash: hashToken(token), expiresAt: new Date(Date.now() + 3_600_000) },
    });
    out.push(token);
  }
  return out;
}
