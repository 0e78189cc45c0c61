// Sign-in throttling policy, pure. Two counters guard every attempt: one per address (a guesser
// spraying many accounts from one place) and one per account (many places guessing one account).
// An attempt is counted before the password is hashed; past a free allowance every further failure
// doubles the wait before the next attempt, up to a cap. The account's cap is short on purpose: a
// stranger who fails on purpose can slow a real user down by at most that much, never lock them out,
// while the address's long cap is the guesser's own problem. Failures are forgotten after a quiet spell.

export interface ThrottlePolicy {
  /** failures allowed before any wait */
  free: number;
  /** the wait after the first failure past the allowance; doubles with each further one */
  baseMs: number;
  capMs: number;
  /** failures older than this (since the last one) are forgotten */
  resetAfterMs: number;
}

export const ADDRESS_POLICY: ThrottlePolicy = { free: 20, baseMs: 1_000, capMs: 15 * 60_000, resetAfterMs: 15 * 60_000 };
export const ACCOUNT_POLICY: ThrottlePolicy = { free: 10, baseMs: 1_000, capMs: 60_000, resetAfterMs: 15 * 60_000 };

export interface ThrottleState {
  failures: number;
  blockedUntil: number | null;
  lastFailureAt: number | null;
}

/** The wait that follows the n-th failure (1-based); 0 within the free allowance. */
export function backoffMs(failures: number, p: ThrottlePolicy): number {
  if (failures <= p.free) return 0;
  return Math.min(p.capMs, p.baseMs * 2 ** Math.min(30, failures - p.free - 1));
}

/**
 * Whether an attempt may go ahead now and, if so, the counter as it stands with this attempt
 * counted as a failure (a success is then given back, see afterSuccess).
 */
export function admit(state: ThrottleState | null, now: number, p: ThrottlePolicy): { allowed: true; next: ThrottleState } | { allowed: false; retryAfterMs: number } {
  if (state?.blockedUntil && state.blockedUntil > now) return { allowed: false, retryAfterMs: state.blockedUntil - now };
  const stale = !state?.lastFailureAt || now - state.lastFailureAt > p.resetAfterMs;
  const failures = (stale ? 0 : state.failures) + 1;
  const wait = backoffMs(failures, p);
  return { allowed: true, next: { failures, blockedUntil: wait > 0 ? now + wait : null, lastFailureAt: now } };
}

/**
 * A correct password: the account's counter starts over (its owner proved who they are); the
 * address gives back only the attempt it counted, so a guesser cannot clear its own record by
 * signing in to an account of its own between guesses.
 */
export function afterSuccess(kind: "address" | "account", state: ThrottleState): ThrottleState {
  if (kind === "account") return { failures: 0, blockedUntil: null, lastFailureAt: null };
  return { ...state, failures: Math.max(0, state.failures - 1), blockedUntil: null };
}
