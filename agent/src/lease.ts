// The node's lease on its work. The control plane's heartbeat reply says how long it lasts
// (lease_s: how long the control plane waits before it declares the node offline and moves its
// work); every heartbeat that gets through renews it. Once it has lapsed, the work here is no
// longer this node's to run: the agent stops it (self-fencing), once, until the lease is renewed.

export class Lease {
  private renewedAt: number;
  private durationMs: number;
  private fenced = false;

  constructor(now: number, defaultS = 90) {
    this.renewedAt = now;
    this.durationMs = defaultS * 1000;
  }

  /** A heartbeat got through. Returns true when this ends a lapse (the node is heard again). */
  renew(now: number, leaseS?: number): boolean {
    this.renewedAt = now;
    if (leaseS && leaseS > 0) this.durationMs = leaseS * 1000;
    const wasFenced = this.fenced;
    this.fenced = false;
    return wasFenced;
  }

  /** True exactly once per lapse: the moment to stop the node's work. */
  lapsed(now: number): boolean {
    if (this.fenced || now - this.renewedAt <= this.durationMs) return false;
    this.fenced = true;
    return true;
  }

  silentForS(now: number): number {
    return Math.round((now - this.renewedAt) / 1000);
  }
}
