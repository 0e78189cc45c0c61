import "server-only";
import { pool } from "@/lib/db/client";
import { renewNodeLease, type NodeLease } from "@/lib/fleet/node-lease";

/** The worker no longer holds the node's lease: whatever it was doing stops here. */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}

/**
 * Keeps a worker's node lease alive while it works (renewed every third of its lifetime) and turns
 * its loss into an abort: the Redfish client the worker uses is given `signal`, so the moment a
 * renewal finds the lease gone (it expired while the worker stalled, and another took it; or an
 * operator revoked it) no further request leaves for the BMC. A renewal that cannot reach the
 * database counts as a loss too: the worker cannot tell, and stopping is the safe side.
 */
export class LeaseKeeper {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  lost = false;

  constructor(
    public lease: NodeLease,
    private readonly ttlMs: number,
    renew = true,
  ) {
    if (renew) this.timer = setInterval(() => void this.renew(), Math.max(250, Math.floor(ttlMs / 3)));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    const renewed = await renewNodeLease(pool(), this.lease, this.ttlMs).catch(() => null);
    if (renewed) this.lease = renewed;
    else this.loseIt(`the lease on node ${this.lease.nodeId} (token ${this.lease.token}) could not be renewed`);
  }

  /** Renews now, before work that talks to the BMC: throws LeaseLost when the lease is gone (a stalled worker wakes up here). */
  async renewNow(): Promise<void> {
    await this.renew();
    this.signal.throwIfAborted();
  }

  loseIt(why: string): void {
    if (this.lost) return;
    this.lost = true;
    this.stop();
    this.controller.abort(new LeaseLost(why));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
