/**
 * Group commit: callers submit work items; while fewer than `maxInFlight` flushes run, an item
 * is flushed at once (no added latency at low load); once every slot is busy, items queue and the
 * next free slot flushes all of them together (up to `maxWeight`). Under load, many small writes
 * become a few large statements and commits; each caller still gets its own result.
 * With `retryAloneOnError`, a group whose flush fails is flushed again item by item, so one bad
 * item never fails the others it happened to be grouped with.
 * With `minWeightBeyondFirst`, only the first slot flushes whatever is queued; further slots open
 * only for at least that much queued weight. Small items then wait for the running flush and go
 * together (fewer, larger statements), while large items still use every slot.
 * Pure scheduling: what a flush does is the caller's function.
 */
export class GroupCommit<I, R> {
  private queue: Array<{ item: I; weight: number; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private queuedWeight = 0;
  private inFlight = 0;

  constructor(
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly opts: { maxInFlight: number; maxWeight: number; retryAloneOnError?: boolean; minWeightBeyondFirst?: number },
  ) {}

  submit(item: I, weight: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, weight, resolve, reject });
      this.queuedWeight += weight;
      this.pump();
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  private pump() {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      if (this.inFlight > 0 && this.queuedWeight < (this.opts.minWeightBeyondFirst ?? 0)) return;
      const group: typeof this.queue = [];
      let weight = 0;
      // always take one; then more while they fit
      do {
        const next = this.queue.shift()!;
        group.push(next);
        weight += next.weight;
        this.queuedWeight -= next.weight;
      } while (this.queue.length > 0 && weight + this.queue[0]!.weight <= this.opts.maxWeight);
      this.inFlight++;
      void this.flushGroup(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flushGroup(group: typeof this.queue): Promise<void> {
    try {
      const results = await this.flush(group.map((g) => g.item));
      group.forEach((g, i) => g.resolve(results[i]!));
    } catch (e) {
      if (group.length === 1 || !this.opts.retryAloneOnError) {
        group.forEach((g) => g.reject(e));
        return;
      }
      await Promise.all(group.map((g) => this.flush([g.item]).then((r) => g.resolve(r[0]!), g.reject)));
    }
  }
}
