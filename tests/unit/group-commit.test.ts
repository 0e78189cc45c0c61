import { describe, expect, it } from "vitest";
import { GroupCommit } from "@/lib/metrics/group-commit";

const deferred = () => {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
};

/** A group commit that records every flush and holds the first one until `gate.release()`. */
function heldFirstFlush<R>(result: (items: number[]) => R[], opts: ConstructorParameters<typeof GroupCommit<number, R>>[1]) {
  const flushes: number[][] = [];
  const gate = deferred();
  const gc = new GroupCommit<number, R>(async (items) => {
    flushes.push(items);
    if (flushes.length === 1) await gate.done;
    return result(items);
  }, opts);
  return { gc, flushes, gate };
}

describe("group commit", () => {
  it("flushes at once while a slot is free, then groups what queued behind busy slots", async () => {
    const { gc, flushes, gate } = heldFirstFlush((items) => items.map((i) => `r${i}`), { maxInFlight: 1, maxWeight: 100 });
    const first = gc.submit(0, 1);
    const rest = [1, 2, 3, 4].map((i) => gc.submit(i, 1));
    expect(flushes).toEqual([[0]]);
    expect(gc.pending).toBe(4);
    gate.release();
    expect(await Promise.all([first, ...rest])).toEqual(["r0", "r1", "r2", "r3", "r4"]);
    expect(flushes).toEqual([[0], [1, 2, 3, 4]]);
  });

  it("keeps small items behind the running flush, yet opens another slot for enough queued weight", async () => {
    const flushes: number[][] = [];
    const gates = [deferred(), deferred(), deferred()];
    const gc = new GroupCommit<number, number>(
      async (items) => {
        const n = flushes.push(items);
        await gates[Math.min(n, gates.length) - 1]!.done;
        return items;
      },
      { maxInFlight: 2, maxWeight: 100, minWeightBeyondFirst: 10 },
    );
    const first = gc.submit(0, 8);
    // small reports wait for the running flush rather than taking the free slot one by one
    const small = [1, 2, 3].map((i) => gc.submit(i, 3));
    expect(flushes).toEqual([[0]]);
    // a fourth brings the queue to the threshold: the second slot takes them all at once
    const fourth = gc.submit(4, 1);
    expect(flushes).toEqual([[0], [1, 2, 3, 4]]);
    // both slots busy: a large item waits too, then goes as soon as one frees
    const large = gc.submit(5, 50);
    expect(flushes).toHaveLength(2);
    gates[0]!.release();
    await first;
    await new Promise((r) => setTimeout(r, 0)); // the freed slot is refilled after the caller hears back
    expect(flushes).toEqual([[0], [1, 2, 3, 4], [5]]);
    gates[1]!.release();
    gates[2]!.release();
    expect(await Promise.all([...small, fourth, large])).toEqual([1, 2, 3, 4, 5]);
  });

  it("never groups beyond the weight limit, but always sends an item heavier than it alone", async () => {
    const { gc, flushes, gate } = heldFirstFlush((items) => items, { maxInFlight: 1, maxWeight: 10 });
    const all = [gc.submit(0, 1), gc.submit(1, 6), gc.submit(2, 4), gc.submit(3, 5), gc.submit(4, 30)];
    gate.release();
    await Promise.all(all);
    expect(flushes).toEqual([[0], [1, 2], [3], [4]]);
  });

  it("runs up to maxInFlight flushes at once and rejects every caller of a failed flush", async () => {
    let running = 0;
    let peak = 0;
    const gc = new GroupCommit<number, number>(
      async (items) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (items.includes(13)) throw new Error("boom");
        return items;
      },
      { maxInFlight: 3, maxWeight: 2 },
    );
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => gc.submit(i, 1)));
    expect(peak).toBe(3);
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
    expect(failed).toContain(13);
    expect(failed.length).toBeLessThanOrEqual(2);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(20 - failed.length);
  });

  it("with retryAloneOnError, a failed group is flushed again item by item: only the bad item fails", async () => {
    const { gc, flushes, gate } = heldFirstFlush(
      (items) => {
        if (items.includes(13)) throw new Error(`bad item in ${items.join(",")}`);
        return items.map((i) => i * 10);
      },
      { maxInFlight: 1, maxWeight: 100, retryAloneOnError: true },
    );
    const first = gc.submit(0, 1);
    const grouped = [12, 13, 14].map((i) => gc.submit(i, 1));
    gate.release();
    const settled = await Promise.allSettled([first, ...grouped]);
    expect(settled.map((r) => (r.status === "fulfilled" ? r.value : "failed"))).toEqual([0, 120, "failed", 140]);
    expect((settled[2] as PromiseRejectedResult).reason.message).toBe("bad item in 13");
    expect(flushes).toEqual([[0], [12, 13, 14], [12], [13], [14]]);
  });
});
