import "server-only";
import { verifyPassword } from "@/lib/auth/password";
import { createHash } from "node:crypto";
import {
  ACCOUNT_POLICY,
  ADDRESS_POLICY,
  KNOWN_PAIR_MS,
  PAIR_POLICY,
  admit,
  afterSuccess,
  isKnownPair,
  type ThrottlePolicy,
  type ThrottleState,
} from "@/lib/auth/sign-in-throttle";
import { db, type Tx } from "@/lib/db/client";
import { run, runCount, runOne, type RowOf } from "@/lib/db/statement";
import { addressScope } from "@/lib/http/client-address";
import { env } from "@/lib/env";
import { DEMO_ACCOUNTS } from "@/lib/platform/demo-accounts";
import { recordSignInEvent } from "@/lib/accounts/sign-in-history";
import { CLOCK_NOW, ENSURE_THROTTLES, LOCK_THROTTLES, PRUNE_THROTTLES, WRITE_THROTTLE, WRITE_THROTTLE_SUCCEEDED } from "./statements";

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
  role: string;
  tenantId: string | null;
  sessionVersion: number;
}

export type SignInResult =
  | {
      ok: true;
      user: SignedInUser;
      /** the password was right, and the account signs in with a second factor too: not signed in yet */
      secondFactor: boolean;
      /** the account had not signed in from this address (its /64 for IPv6) before, and has signed in before */
      newPlace: boolean;
    }
  | { ok: false; reason: "invalid" | "disabled" }
  | { ok: false; reason: "unverified"; user: { id: string; email: string; tenantId: string | null } }
  | { ok: false; reason: "throttled"; retryAfterS: number };

const DEMO_EMAILS = new Set(DEMO_ACCOUNTS.map((a) => a.email));

/**
 * Checks an email and password from `address`. Throttled per address, per account and address
 * pair, and per account before the password is hashed (lib/auth/sign-in-throttle.ts), with the
 * counters in the database: the check and the count happen in one transaction under the counters'
 * row locks, so parallel attempts — from one process or many app instances — are counted one by
 * one and none slips past.
 */
export async function verifyCredentials(
  emailRaw: string,
  password: string,
  address: string,
  userAgent?: string | null,
): Promise<SignInResult> {
  const email = emailRaw.trim().toLowerCase().slice(0, 254);
  const keys = throttleKeys(email, address);
  const gate = await countAttempt(keys, PASSWORD_POLICIES, true);
  if (!gate.allowed) return { ok: false, reason: "throttled", retryAfterS: Math.ceil(gate.retryAfterMs / 1000) };

  const user = await db().user.findUnique({
    where: { email },
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      tenantId: true,
      passwordHash: true,
      disabledAt: true,
      sessionVersion: true,
      emailVerifiedAt: true,
      totpEnabledAt: true,
      lastLoginAt: true,
      tenant: { select: { status: true } },
    },
  });
  // the demo's published accounts sign in only in demo mode, whatever database they ended up in
  const usable = user && (env().DEMO_MODE || !DEMO_EMAILS.has(email)) ? user : null;
  const valid = await verifyPassword(usable?.passwordHash ?? null, password);
  const visitor = { address, userAgent: userAgent ?? null };
  if (!usable || !valid) {
    if (usable) await recordSignInEvent(usable.id, "wrong_password", null, visitor);
    return { ok: false, reason: "invalid" };
  }
  await giveBack(keys);
  if (usable.disabledAt || (usable.tenant && usable.tenant.status !== "active")) {
    await recordSignInEvent(usable.id, "disabled", null, visitor);
    return { ok: false, reason: "disabled" };
  }
  // an unconfirmed sign-up: the password was right, but the address is not proven yet
  if (!usable.emailVerifiedAt) {
    await recordSignInEvent(usable.id, "unverified", null, visitor);
    return { ok: false, reason: "unverified", user: { id: usable.id, email: usable.email, tenantId: usable.tenantId } };
  }
  const signedIn = {
    id: usable.id,
    email: usable.email,
    name: usable.name,
    role: usable.role,
    tenantId: usable.tenantId,
    sessionVersion: usable.sessionVersion,
  };
  const newPlace = !gate.knownPair && usable.lastLoginAt !== null;
  if (usable.totpEnabledAt) return { ok: true, user: signedIn, secondFactor: true, newPlace };
  await db().user.update({ where: { id: usable.id }, data: { lastLoginAt: new Date() } });
  await recordSignInEvent(usable.id, "succeeded", "password", visitor);
  return { ok: true, user: signedIn, secondFactor: false, newPlace };
}

const PASSWORD_POLICIES = { address: ADDRESS_POLICY, account: ACCOUNT_POLICY, pair: PAIR_POLICY } as const;

/**
 * An account's password asked for outside sign-in (confirming a sign-up's address): counted on
 * the sign-in counters of the account and the address, so it is no second place to guess one.
 */
export async function checkAccountPassword(
  email: string,
  passwordHash: string | null,
  password: string,
  address: string,
): Promise<{ ok: boolean } | { ok: false; retryAfterS: number }> {
  const keys = throttleKeys(email, address);
  const gate = await countAttempt(keys, PASSWORD_POLICIES, true);
  if (!gate.allowed) return { ok: false, retryAfterS: Math.ceil(gate.retryAfterMs / 1000) };
  const ok = await verifyPassword(passwordHash, password);
  if (ok) await giveBack(keys);
  return { ok };
}

export interface ThrottleKeys {
  address: string;
  account: string;
  pair: string;
}

function throttleKeys(email: string, address: string): ThrottleKeys {
  const scope = addressScope(address).slice(0, 100);
  return {
    address: `ip:${scope}`,
    account: `email:${email}`,
    // hashed: an email and an address together can outgrow the key's length limit
    pair: `pair:${createHash("sha256").update(`${email}\n${scope}`).digest("hex")}`,
  };
}

type Row = RowOf<typeof LOCK_THROTTLES>;
const toState = (r: Row): ThrottleState => ({
  failures: r.failures,
  blockedUntil: r.blocked_until?.getTime() ?? null,
  lastFailureAt: r.last_failure_at?.getTime() ?? null,
});

async function lockRows(tx: Tx, keys: ThrottleKeys): Promise<Row[]> {
  // locked in key order, so two attempts never wait on each other crosswise
  return run(tx, LOCK_THROTTLES, [keys.address, keys.account, keys.pair]);
}

async function writeState(tx: Tx, key: string, next: ThrottleState, succeededAt?: Date): Promise<void> {
  const blocked = next.blockedUntil === null ? null : new Date(next.blockedUntil);
  const last = next.lastFailureAt === null ? null : new Date(next.lastFailureAt);
  if (succeededAt) {
    await run(tx, WRITE_THROTTLE_SUCCEEDED, [next.failures, blocked, last, succeededAt, key]);
  } else {
    await run(tx, WRITE_THROTTLE, [next.failures, blocked, last, key]);
  }
}

/**
 * Counts the attempt against every counter that applies, or refuses it (changing nothing) when one
 * is waiting out a back-off. A pair that signed in before leaves the per-account counter alone.
 */
export async function countAttempt(
  keys: ThrottleKeys,
  by: { address: ThrottlePolicy; account: ThrottlePolicy; pair: ThrottlePolicy },
  knownPairSkipsAccount: boolean,
): Promise<{ allowed: true; knownPair: boolean } | { allowed: false; retryAfterMs: number }> {
  const policies: Record<string, ThrottlePolicy> = {
    [keys.address]: by.address,
    [keys.account]: by.account,
    [keys.pair]: by.pair,
  };
  return db().$transaction(async (tx) => {
    await run(tx, ENSURE_THROTTLES, [keys.address, keys.account, keys.pair]);
    const rows = await lockRows(tx, keys);
    const now = (await runOne(tx, CLOCK_NOW))!.now.getTime();
    const pair = rows.find((r) => r.key === keys.pair);
    const known = isKnownPair(pair?.succeeded_at?.getTime() ?? null, now);
    const decisions = rows
      .filter((r) => !(known && knownPairSkipsAccount && r.key === keys.account))
      .map((r) => ({ key: r.key, d: admit(toState(r), now, policies[r.key]!) }));
    const refused = decisions.flatMap((x) => (x.d.allowed ? [] : [x.d.retryAfterMs]));
    if (refused.length) return { allowed: false as const, retryAfterMs: Math.max(...refused) };
    for (const { key, d } of decisions) if (d.allowed) await writeState(tx, key, d.next);
    return { allowed: true as const, knownPair: known };
    // A flood of attempts at one account queues on its row, each holding a connection: the
    // default two seconds' wait for one turned the flood into 500s on a busy machine.
  }, THROTTLE_TX);
}

const THROTTLE_TX = { maxWait: 15_000, timeout: 15_000 };

/** A correct password: the counters give the attempt back and the pair is remembered as known. */
export async function giveBack(keys: ThrottleKeys): Promise<void> {
  await db().$transaction(async (tx) => {
    for (const r of await lockRows(tx, keys)) {
      const kind = r.key === keys.account ? "account" : r.key === keys.pair ? "pair" : "address";
      await writeState(tx, r.key, afterSuccess(kind, toState(r)), kind === "pair" ? new Date() : undefined);
    }
  });
}

/**
 * Forgets counters quiet for a day (the sweep; each row is re-created by the next attempt), except
 * a pair's memory of a successful sign-in, kept while it still vouches for the pair.
 */
export async function pruneSignInThrottles(): Promise<{ deleted: number }> {
  const deleted = await runCount(db(), PRUNE_THROTTLES, [KNOWN_PAIR_MS / 1000]);
  return { deleted };
}
