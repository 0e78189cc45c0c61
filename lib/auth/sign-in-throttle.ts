// Sign-in throttling policy, pure. Three counters guard every attempt:
//   - per address (a guesser spraying many accounts from one place; IPv6 counted by its /64),
//   - per account and address pair (one place guessing one account),
//   - per account (many places guessing one account), with a larger allowance.
// An attempt is counted before the password is hashed; past a free allowance every further failure
// doubles the wait before the next attempt, up to a cap. A pair that has signed in successfully
// before skips the per-account counter: failures strangers pile onto an account never hold back
// the places its owner signs in from, so nobody can lock a user out by failing on purpose. The
// per-account cap is short for the same reason (a new place waits at most a minute), while the
// address's and the pair's long caps are the guesser's own problem. Failures are forgotten after a
// quiet spell.

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
export const PAIR_POLICY: ThrottlePolicy = { free: 10, baseMs: 1_000, capMs: 15 * 60_000, resetAfterMs: 15 * 60_000 };
export const ACCOUNT_POLICY: ThrottlePolicy = { free: 50, baseMs: 1_000, capMs: 60_000, resetAfterMs: 15 * 60_000 };
/**
 * Second-factor codes of one account (a password already right): a few free tries for typos, then
 * waits from 30 seconds doubling to 15 minutes, so a million-code space cannot be walked (about a
 * hundred guesses a day). Nobody without the password can touch this counter. Forgotten only after
 * six quiet hours: a reset as short as the cap gave a patient guesser its free tries back after
 * every capped wait.
 */
export const SECOND_FACTOR_POLICY: ThrottlePolicy = { free: 5, baseMs: 30_000, capMs: 15 * 60_000, resetAfterMs: 6 * 3600_000 };
/** how long a successful sign-in vouches for its account and address pair */
export const KNOWN_PAIR_MS = 90 * 24 * 3600_000;

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
export function admit(
  state: ThrottleState | null,
  now: number,
  p: ThrottlePolicy,
): { allowed: true; next: ThrottleState } | { allowed: false; retryAfterMs: number } {
  if (state?.blockedUntil && state.blockedUntil > now) return { allowed: false, retryAfterMs: state.blockedUntil - now };
  // the quiet spell starts when the last wait ended: waiting out the cap is not being quiet
  const quietSince = Math.max(state?.lastFailureAt ?? 0, state?.blockedUntil ?? 0);
  const stale = !state?.lastFailureAt || now - quietSince > p.resetAfterMs;
  const failures = (stale ? 0 : state.failures) + 1;
  const wait = backoffMs(failures, p);
  return { allowed: true, next: { failures, blockedUntil: wait > 0 ? now + wait : null, lastFailureAt: now } };
}

/** Whether a pair that last signed in at `succeededAt` skips the per-account counter now. */
export function isKnownPair(succeededAt: number | null, now: number): boolean {
  return succeededAt !== null && now - succeededAt <= KNOWN_PAIR_MS;
}

/**
 * A correct password: the account's and the pair's counters start over (the owner proved who they
 * are); the address gives back only the attempt it counted, so a guesser cannot clear its own
 * record by signing in to an account of its own between guesses.
 */
export function afterSuccess(kind: "address" | "account" | "pair", state: ThrottleState): ThrottleState {
  if (kind !== "address") return { failures: 0, blockedUntil: null, lastFailureAt: null };
  return { ...state, failures: Math.max(0, state.failures - 1), blockedUntil: null };
}
