import { RateLimiterMemory } from "rate-limiter-flexible";
import { rateLimited } from "@/lib/errors";

// Per-process limits, keyed by caller. Each app instance enforces its own share; that is the
// usual trade-off for API rate limits (a shared store would add a round trip to every call).
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
