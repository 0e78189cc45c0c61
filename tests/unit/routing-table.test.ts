import { describe, expect, it } from "vitest";
import { RoutingTable } from "@/lib/gateway/routing-table";

/** A routing table whose reads are counted and held until released, each seeing the "database" as it was when the read began. */
class HeldTable extends RoutingTable {
  world = 0;
  seen: number[] = [];
  reads = 0;
  private gates: Array<() => void> = [];

  protected override async load(): Promise<void> {
    const snapshot = this.world;
    this.reads++;
    await new Promise<void>((release) => this.gates.push(release));
    this.seen.push(snapshot);
  }

  releaseAll() {
    this.gates.splice(0).forEach((release) => release());
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("the gateway's routing table", () => {
  it("a refresh resolves only after a read that began after it was asked for, so a write just committed is in the table", async () => {
    const t = new HeldTable();
    const background = t.refresh();
    expect(t.reads).toBe(1);
    t.world = 1; // committed while the background read is under way
    const mine = t.refresh();
    const alsoMine = t.refresh();
    expect(t.reads).toBe(1);
    t.releaseAll();
    await background;
    await settle();
    // callers arriving during one read share one more read, begun after that one ended
    expect(t.reads).toBe(2);
    t.releaseAll();
    await Promise.all([mine, alsoMine]);
    expect(t.seen).toEqual([0, 1]);
  });

  it("refreshes with nothing under way start a read each, and a failed read does not stop the one queued behind it", async () => {
    class Failing extends HeldTable {
      failed = false;
      protected override async load(): Promise<void> {
        await super.load();
        if (!this.failed) {
          this.failed = true;
          throw new Error("database went away");
        }
      }
    }
    const t = new Failing();
    const first = t.refresh();
    const second = t.refresh();
    t.releaseAll();
    await expect(first).rejects.toThrow("database went away");
    await settle();
    t.releaseAll();
    await second;
    expect(t.reads).toBe(2);
    const third = t.refresh();
    t.releaseAll();
    expect(t.reads).toBe(3);
    await third;
    expect(t.seen).toHaveLength(3);
  });
});
