import "server-only";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { verifyPassword } from "@/lib/auth/password";
import { db } from "@/lib/db/client";

// Ten wrong passwords for one email in 15 minutes lock that email out of this instance for the
// rest of the window; brute force costs an attacker a long time per account.
const failures = new RateLimiterMemory({ points: 10, duration: 15 * 60 });

export type SignInResult =
  | { ok: true; user: { id: string; email: string; name: string; role: string; tenantId: string | null } }
  | { ok: false; reason: "invalid" | "locked" | "disabled" };

export async function verifyCredentials(emailRaw: string, password: string): Promise<SignInResult> {
  const email = emailRaw.trim().toLowerCase();
  const state = await failures.get(email);
  if (state && state.consumedPoints >= 10) return { ok: false, reason: "locked" };

  const user = await db().user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, role: true, tenantId: true, passwordHash: true, disabledAt: true, tenant: { select: { status: true } } },
  });
  const valid = await verifyPassword(user?.passwordHash ?? null, password);
  if (!user || !valid) {
    await failures.penalty(email, 1);
    return { ok: false, reason: "invalid" };
  }
  if (user.disabledAt || (user.tenant && user.tenant.status !== "active")) return { ok: false, reason: "disabled" };
  await failures.delete(email);
  await db().user.update({ where: { id: user.id }, data: { lastLoginAt: new Date() } });
  return { ok: true, user: { id: user.id, email: user.email, name: user.name, role: user.role, tenantId: user.tenantId } };
}
