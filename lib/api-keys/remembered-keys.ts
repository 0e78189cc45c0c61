import type { AgentPrincipal } from "@/lib/auth/principal";

/**
 * Agents' keys a process has checked against the database lately, by key hash. Pure bookkeeping:
 * whoever owns it says when it may be trusted (`trusted`, asked at every use) and when to forget.
 *
 * The race it closes: a lookup that read a key as valid just before a revocation committed must
 * not be remembered after the revocation's "forget" arrived. So a lookup takes a ticket before
 * it reads the database, and `remember` refuses a ticket from before the last `forget`.
 */
export class RememberedKeys {
  private entries = new Map<string, { principal: AgentPrincipal; expiresAt: number }>();
  private generation = 0;

  constructor(private readonly opts: { ttlMs: number; maxEntries: number; trusted: () => boolean; now?: () => number }) {}

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  get size(): number {
    return this.entries.size;
  }

  recall(keyHash: string): AgentPrincipal | undefined {
    if (!this.opts.trusted()) return undefined;
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.principal;
  }

  /** Taken before reading the database; null when nothing read now may be remembered. */
  ticket(): number | null {
    return this.opts.trusted() ? this.generation : null;
  }

  /** Remembers a key for the TTL, and never past the key's own expiry (`keyExpiresAt`, ms). */
  remember(ticket: number | null, keyHash: string, principal: AgentPrincipal, keyExpiresAt: number | null = null): void {
    if (ticket === null || ticket !== this.generation || !this.opts.trusted()) return;
    // a bound, not an LRU: a fleet has far fewer agent keys than this
    if (this.entries.size >= this.opts.maxEntries) this.entries.clear();
    const until = Math.min(this.now() + this.opts.ttlMs, keyExpiresAt ?? Infinity);
    this.entries.set(keyHash, { principal, expiresAt: until });
  }

  forget(): void {
    this.generation++;
    this.entries.clear();
  }
}
