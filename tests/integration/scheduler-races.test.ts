import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { actorFor, availableFleet, makeTenant, tenantAdminPrincipal } from "../support/fixtures";

// The scheduling cycle reads free GPUs without locking them and locks only the GPUs it chose,
// just before it writes (lib/scheduler/write-decisions.ts). Whatever changed in between must make
// it run again from fresh facts, never wait on someone else's transaction, never write a placement
// the database refuses.

/** A client of its own, inside a transaction, to hold locks the way another writer would. */
async function otherTransaction() {
  const c = new pg.Client({ connectionString: inject("databaseUrl") });
  c.on("error", () => {});
  await c.connect();
  await c.query("BEGIN");
  return {
    c,
    async end(commit: boolean) {
      await c.query(commit ? "COMMIT" : "ROLLBACK");
      await c.end();
    },
  };
}

async function waitingOnLock(query: string): Promise<void> {
  // up to 40 s: on a loaded machine (the whole suite, two cores) a cycle can take that long to get there
  for (let i = 0; i < 1600; i++) {
    const { rows } = await pool().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
      [query],
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nothing waited on a lock running ${query}`);
}

/** The GPU rows of a job, by node and index. */
const gpusOf = async (jobId: string) =>
  db().gpu.findMany({
    where: { allocatedJobId: jobId },
    select: { id: true, nodeId: true, index: true },
    orderBy: [{ nodeId: "asc" }, { index: "asc" }],
  });

describe("a cycle racing other writers", () => {
  it("leaves a GPU another transaction holds for the next attempt and places the job on another, without waiting for it", async () => {
    const { gpuType, nodes } = await availableFleet(2);
    const t = await makeTenant(8);
    // best fit with equal nodes goes to the smallest node id, and there to its first GPU: hold that one,
    // before the job exists, so no other file's cycle on the shared database can place it there first
    const first = [...nodes].sort((a, b) => (a.node.id < b.node.id ? -1 : 1))[0]!;
    const wanted = first.gpus.find((g) => g.index === 0)!;
    const holder = await otherTransaction();
    const { job, cycle } = await (async () => {
      try {
        await holder.c.query(`SELECT id FROM gpus WHERE id = $1 FOR UPDATE`, [wanted.id]);
        const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
          name: "one",
          gpu_count: 1,
          gpu_type: gpuType,
          priority: 5,
          max_retries: 0,
        });
        // the cycle completes while the lock is still held: it never waited for it
        return { job, cycle: await runSchedulerCycle("test: a GPU held elsewhere") };
      } finally {
        await holder.end(false);
      }
    })();
    // placed by this cycle, or by another file's cycle on the shared database (never onto the held GPU either way)
    expect(cycle.placed + (await db().job.count({ where: { id: job.id, status: "running" } }))).toBeGreaterThanOrEqual(1);
    const held = await gpusOf(job.id);
    expect(held).toHaveLength(1);
    expect(held[0]!.id).not.toBe(wanted.id);
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id } })).status).toBe("running");
  }, 120_000);

  it("runs again when a reservation books its chosen node between its reads and its writes, and never places there", async () => {
    const { gpuType, nodes } = await availableFleet(3);
    const t = await makeTenant(16);
    const owner = await makeTenant(16);
    const [chosen, other, booked] = [...nodes].sort((a, b) => (a.node.id < b.node.id ? -1 : 1));
    /** Books a node for `owner` from a minute ago for an hour, as a reservation does. */
    const book = async (c: pg.Pool | pg.ClientBase, nodeId: string) => {
      const { rows } = await c.query<{ id: string }>(
        `INSERT INTO reservations (tenant_id, gpu_type, node_count, starts_at, ends_at, status, created_by)
         VALUES ($1, $2, 1, now() - interval '1 minute', now() + interval '1 hour', 'active', 'test') RETURNING id`,
        [owner.id, gpuType],
      );
      await c.query(
        `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at)
         VALUES ($1, $2, $3, 8, now() - interval '1 minute', now() + interval '1 hour')`,
        [rows[0]!.id, owner.id, nodeId],
      );
    };
    // a free node held by a reservation now: the cycle reads the live reservations after the nodes'
    // bookings (without one it has no reason to), whatever else the shared database holds
    await book(pool(), booked!.node.id);
    const blocker = await otherTransaction();
    let committed = false;
    try {
      // the chosen node's GPUs held first: another file's cycle that reads this job before the lock
      // below could otherwise place it there before the booking (CI saw one do so); it leaves them for
      // its next attempt instead. Held until the commit, before this test's cycle writes.
      await blocker.c.query(`SELECT id FROM gpus WHERE node_id = $1 FOR UPDATE`, [chosen!.node.id]);
      const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
        name: "whole",
        gpu_count: 8,
        gpu_type: gpuType,
        priority: 5,
        max_retries: 0,
      });
      // the cycle reads the nodes' bookings and then the live reservations: hold it between the two
      await blocker.c.query(`LOCK TABLE reservations IN ACCESS EXCLUSIVE MODE`);
      const cycle = runSchedulerCycle("test: a booking meanwhile");
      await waitingOnLock("SELECT r.id, r.tenant_id%FROM reservations r%");
      // meanwhile another tenant books the node this cycle will choose, and commits
      await book(blocker.c, chosen!.node.id);
      await blocker.end(true);
      committed = true;
      const result = await cycle;
      // placed by this cycle, or by another file's cycle on the shared database (never onto the booked node either way)
      expect(result.placed + (await db().job.count({ where: { id: job.id, status: "running" } }))).toBeGreaterThanOrEqual(1);
      const held = await gpusOf(job.id);
      expect(held).toHaveLength(8);
      expect(new Set(held.map((g) => g.nodeId))).toEqual(new Set([other!.node.id]));
    } finally {
      if (!committed) await blocker.end(false);
    }
  }, 120_000);
});
