import "server-only";
import { verifyPassword } from "@/lib/auth/password";
import { ACCOUNT_POLICY, ADDRESS_POLICY, admit, afterSuccess, type ThrottlePolicy, type ThrottleState } from "@/lib/auth/sign-in-throttle";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { DEMO_ACCOUNTS } from "@/lib/platform/demo-accounts";

export type SignInResult =
  | { ok: true; user: { id: string; email: string; name: string; role: string; tenantId: string | null; sessionVersion: number } }
  | { ok: false; reason: "invalid" | "disabled" }
  | { ok: false; reason: "throttled"; retryAfterS: number };

const DEMO_EMAILS = new Set(DEMO_ACCOUNTS.map((a) => a.email));

/**
 * Checks an email and password from `address`. Throttled per address and per account before the
 * password is hashed (lib/auth/sign-in-throttle.ts), with the counters in the database: the check
 * and the count happen in one transaction under the counters' row locks, so parallel attempts —
 * from one process or many app instances — are counted one by one and none slips past.
 */
export async function verifyCredentials(emailRaw: string, password: string, address: string): Promise<SignInResult> {
  const email = emailRaw.trim().toLowerCase().slice(0, 254);
  const keys = { address: `ip:${address.slice(0, 100)}`, account: `email:${email}` };
  const gate = await countAttempt(keys);
  if (!gate.allowed) return { ok: false, reason: "throttled", retryAfterS: Math.ceil(gate.retryAfterMs / 1000) };

  const user = await db().user.findUnique({
    where: { email },
    select: { id: true, email: true, name: true, role: true, tenantId: true, passwordHash: true, disabledAt: true, sessionVersion: true, tenant: { select: { status: true } } },
  });
  // the demo's published accounts sign in only in demo mode, whatever database they ended up in
  const usable = user && (env().DEMO_MODE || !DEMO_EMAILS.has(email)) ? user : null;
  const valid = await verifyPassword(usable?.passwordHash ?? null, password);
  if (!usable || !valid) return { ok: false, reason: "invalid" };
  await giveBack(keys);
  if (usable.disabledAt || (usable.tenant && usable.tenant.status !== "active")) return { ok: false, reason: "disabled" };
  await db().user.update({ where: { id: usable.id }, data: { lastLoginAt: new Date() } });
  return { ok: true, user: { id: usable.id, email: usable.email, name: usable.name, role: usable.role, tenantId: usable.tenantId, sessionVersion: usable.sessionVersion } };
}

type Row = { key: string; failures: number; blocked_until: Date | null; last_failure_at: Date | null };
const toState = (r: Row): ThrottleState => ({ failures: r.failures, blockedUntil: r.blocked_until?.getTime() ?? null, lastFailureAt: r.last_failure_at?.getTime() ?? null });

/** Counts the attempt against both keys, or refuses it (changing nothing) when either is waiting out a back-off. */
async function countAttempt(keys: { address: string; account: string }): Promise<{ allowed: true } | { allowed: false; retryAfterMs: number }> {
  const policies: Record<string, ThrottlePolicy> = { [keys.address]: ADDRESS_POLICY, [keys.account]: ACCOUNT_POLICY };
  return db().$transaction(async (tx) => {
    await tx.$executeRaw`INSERT INTO sign_in_throttles (key) VALUES (${keys.address}), (${keys.account}) ON CONFLICT (key) DO NOTHING`;
    // locked in key order, so two attempts never wait on each other crosswise
    const rows = await tx.$queryRaw<Row[]>`
      SELECT key, failures, blocked_until, last_failure_at FROM sign_in_throttles WHERE key IN (${keys.address}, ${keys.account}) ORDER BY key FOR UPDATE`;
    const now = (await tx.$queryRaw<[{ now: Date }]>`SELECT clock_timestamp() AS now`)[0].now.getTime();
    const decisions = rows.map((r) => ({ key: r.key, d: admit(toState(r), now, policies[r.key]!) }));
    const refused = decisions.flatMap((x) => (x.d.allowed ? [] : [x.d.retryAfterMs]));
    if (refused.length) return { allowed: false as const, retryAfterMs: Math.max(...refused) };
    for (const { key, d } of decisions) {
      if (!d.allowed) continue;
      await tx.$executeRaw`
        UPDATE sign_in_throttles SET failures = ${d.next.failures}, blocked_until = ${d.next.blockedUntil === null ? null : new Date(d.next.blockedUntil)},
               last_failure_at = ${new Date(d.next.lastFailureAt!)} WHERE key = ${key}`;
    }
    return { allowed: true as const };
  });
}

async function giveBack(keys: { address: string; account: string }): Promise<void> {
  await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Row[]>`
      SELECT key, failures, blocked_until, last_failure_at FROM sign_in_throttles WHERE key IN (${keys.address}, ${keys.account}) ORDER BY key FOR UPDATE`;
    for (const r of rows) {
      const next = afterSuccess(r.key === keys.account ? "account" : "address", toState(r));
      await tx.$executeRaw`
        UPDATE sign_in_throttles SET failures = ${next.failures}, blocked_until = ${next.blockedUntil === null ? null : new Date(next.blockedUntil)},
               last_failure_at = ${next.lastFailureAt === null ? null : new Date(next.lastFailureAt)} WHERE key = ${r.key}`;
    }
  });
}

/** Forgets counters quiet for a day (the sweep; each row is re-created by the next attempt). */
export async function pruneSignInThrottles(): Promise<{ deleted: number }> {
  const deleted = await db().$executeRaw`DELETE FROM sign_in_throttles WHERE (blocked_until IS NULL OR blocked_until < now()) AND (last_failure_at IS NULL OR last_failure_at < now() - interval '1 day')`;
  return { deleted };
}
