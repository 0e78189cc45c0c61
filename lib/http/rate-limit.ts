import { RateLimiterMemory } from "rate-limiter-flexible";
import { rateLimited } from "@/lib/errors";
import { addressScope } from "./client-address";

// Per-process limits, keyed by caller. Every limit that counts an address counts it as
// addressScope does (an IPv6 address by its /64, as sign-in does): the functions here that take an
// address scope it themselves, so no caller can forget, and a guesser cannot get 2^64 fresh
// counters by rotating the low bits of its IPv6 address. Each app instance enforces its own share; that is the
// usual trade-off for API rate limits (a shared store would add a round trip to every call, and
// the guards below exist precisely so that unauthenticated traffic reaches no database).
const limiters = new Map<number, RateLimiterMemory>();

export async function consumeRateLimit(key: string, perMinute: number): Promise<void> {
  let limiter = limiters.get(perMinute);
  if (!limiter) {
    limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
    limiters.set(perMinute, limiter);
  }
  try {
    await limiter.consume(key);
  } catch (e) {
    if (e instanceof Error) throw e;
    throw rateLimited(`Rate limit of ${perMinute} requests per minute exceeded`);
  }
}

/** A per-address limit of one operation: `perMinute` requests from the address's scope (IPv6: its /64). */
export async function consumeAddressRateLimit(operation: string, address: string, perMinute: number): Promise<void> {
  await consumeRateLimit(`${operation}:${addressScope(address)}`, perMinute);
}

/** Requests without credentials one address may make a minute, across every route, per process. */
const ANONYMOUS_PER_MINUTE = 600;
/** Failed authentications (unknown, revoked or malformed keys, dead sessions) one address may make a minute. */
const FAILED_AUTH_PER_MINUTE = 30;

const anonymous = new RateLimiterMemory({ points: ANONYMOUS_PER_MINUTE, duration: 60 });
const failedAuth = new RateLimiterMemory({ points: FAILED_AUTH_PER_MINUTE, duration: 60 });

/**
 * Checked before anything touches the database: an address that has failed to authenticate too
 * often this minute is answered 429 at once, so guessing keys (each guess would cost an indexed
 * lookup) is throttled per address; anonymous requests are throttled likewise.
 */
export async function guardAddress(address: string, hasCredentials: boolean): Promise<void> {
  const scope = addressScope(address);
  const failures = await failedAuth.get(scope);
  if (failures && failures.consumedPoints >= FAILED_AUTH_PER_MINUTE) {
    throw rateLimited("Too many failed authentications from your address; wait a minute");
  }
  if (!hasCredentials) {
    try {
      await anonymous.consume(scope);
    } catch (e) {
      if (e instanceof Error) throw e;
      throw rateLimited(`More than ${ANONYMOUS_PER_MINUTE} unauthenticated requests a minute from your address`);
    }
  }
}

/** Counts one failed authentication against an address. */
export async function recordFailedAuth(address: string): Promise<void> {
  await failedAuth.penalty(addressScope(address), 1);
}
