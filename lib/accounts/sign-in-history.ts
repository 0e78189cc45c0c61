import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { runCount } from "@/lib/db/statement";
import { forbidden, notFound } from "@/lib/errors";
import { oneOf } from "@/lib/vocabulary";
import { PRUNE_SIGN_IN_EVENTS } from "./statements";

import { SIGN_IN_METHODS, SIGN_IN_OUTCOMES, type SignInMethod, type SignInOutcome } from "./vocabulary";

/** How long sign-in history is kept. */
const SIGN_IN_HISTORY_DAYS = 90;

/** One attempt at an existing account, for its owner's history. */
export async function recordSignInEvent(
  userId: string,
  outcome: SignInOutcome,
  method: SignInMethod | null,
  visitor: { address: string; userAgent: string | null },
): Promise<void> {
  await db().signInEvent.create({
    data: {
      userId,
      outcome,
      method,
      address: visitor.address.slice(0, 100),
      userAgent: visitor.userAgent ? visitor.userAgent.slice(0, 400) : null,
    },
    select: { id: true },
  });
}

/**
 * A user's sign-in history, newest first: the user themselves, a tenant admin for users of their
 * tenant, operators for anyone. Another tenant's user is not found.
 */
export async function listSignIns(p: Principal, userId: string, opts: { limit: number; before?: string }) {
  const self = "userId" in p && p.userId === userId;
  if (p.kind !== "operator" && p.kind !== "tenant") throw forbidden("Sign-in history is for operators and tenants");
  const user = await db().user.findFirst({
    where: { id: userId, ...(p.kind === "tenant" ? { tenantId: p.tenantId } : {}) },
    select: { id: true },
  });
  if (!user) throw notFound("User");
  if (p.kind === "tenant" && p.role !== "tenant_admin" && !self) throw forbidden("Members see only their own sign-ins");
  const rows = await db().signInEvent.findMany({
    where: { userId, ...(opts.before ? { id: { lt: BigInt(opts.before) } } : {}) },
    orderBy: { id: "desc" },
    take: opts.limit + 1,
  });
  const data = rows.slice(0, opts.limit).map((r) => ({
    id: r.id.toString(),
    outcome: oneOf(SIGN_IN_OUTCOMES, r.outcome, "sign_in_events.outcome"),
    method: r.method === null ? null : oneOf(SIGN_IN_METHODS, r.method, "sign_in_events.method"),
    address: r.address,
    user_agent: r.userAgent,
    at: r.createdAt.toISOString(),
  }));
  return { data, nextCursor: rows.length > opts.limit ? data[data.length - 1]!.id : null };
}

/** Forgets sign-in history older than SIGN_IN_HISTORY_DAYS (the sweep). */
export async function pruneSignInHistory(): Promise<{ deleted: number }> {
  return { deleted: await runCount(db(), PRUNE_SIGN_IN_EVENTS, [SIGN_IN_HISTORY_DAYS]) };
}
