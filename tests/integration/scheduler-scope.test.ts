import { describe, expect, it } from "vitest";
import { db, pool } from "@/lib/db/client";
import { lockForTransaction } from "@/lib/db/locks";
import { submitJob } from "@/lib/jobs/submit-job";
import { readCycleFacts, type CycleScope } from "@/lib/scheduler/cycle-facts";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { actorFor, availableFleet, makeTenant, tenantAdminPrincipal } from "../support/fixtures";

// A cycle woken by an event reads only the work it could place now: waiting jobs of GPU types with
// a free GPU (lib/scheduler/cycle-facts.ts). Work of a full type keeps its place and its reason
// until a cycle of the "waiting" scope (every few seconds, beside the placing cycles, under a lock of
// its own) or a whole sweep says what changed for it.

/**
 * The jobs a cycle of that scope would read now, among `ids`: what it reads is checked directly, as
 * other files' cycles (of every scope) share this database and may well decide about these jobs.
 */
async function read(scope: CycleScope, ids: string[]): Promise<string[]> {
  const c = await pool().connect();
  try {
    await c.query("BEGIN");
    const facts = await readCycleFacts(c, scope, new Set());
    return (facts?.jobs ?? []).map((j) => j.id).filter((id) => ids.includes(id));
  } finally {
    await c.query("ROLLBACK");
    c.release();
  }
}

const status = (id: string) => db().job.findUniqueOrThrow({ where: { id }, select: { status: true, pendingReason: true } });

/**
 * Two GPU types of one node each: one full (its 8 GPUs running a filler), one free. A job waits for
 * 4 GPUs of the full type at the best priority; another asks for 2 of the free type.
 */
async function fullAndOpenTypes() {
  const full = await availableFleet(1);
  const open = await availableFleet(1);
  const t = await makeTenant(64);
  const asT = actorFor(tenantAdminPrincipal(t.id));
  const filler = await submitJob(asT, { name: "filler", gpu_count: 8, gpu_type: full.gpuType, priority: 5, max_retries: 0 });
  await runSchedulerCycle("test: fill", { scope: "placeable" });
  expect((await status(filler.id)).status).toBe("running");
  const behind = await submitJob(asT, { name: "behind", gpu_count: 4, gpu_type: full.gpuType, priority: 1, max_retries: 0 });
  const free = await submitJob(asT, { name: "free", gpu_count: 2, gpu_type: open.gpuType, priority: 9, max_retries: 0 });
  return { full, behind, free };
}

describe("what a cycle woken by an event reads", () => {
  it("places work of a type with free GPUs, leaves a full type's queue to the sweep, and the sweep then gives it its reason", async () => {
    const { full, behind, free } = await fullAndOpenTypes();
    // the full type's job is not read; the job for free GPUs is, and runs although a better-priority
    // job of a full type waits; the waiting scope reads exactly the other
    const placeable = await read("placeable", [behind.id, free.id]);
    expect(placeable).not.toContain(behind.id);
    // another file's cycle may have placed it already: then it is running, never waiting
    expect(placeable.includes(free.id) || (await status(free.id)).status === "running").toBe(true);
    expect(await read("waiting", [behind.id, free.id])).toEqual([behind.id]);
    await runSchedulerCycle("test: an event", { scope: "placeable" });
    expect((await status(free.id)).status).toBe("running");
    expect((await status(behind.id)).status).toBe("queued");

    await runSchedulerCycle("test: the sweep");
    expect((await status(behind.id)).pendingReason).toMatch(new RegExp(`Needs 4 free ${full.gpuType} GPUs; 0 free now`));
  });

  it("reads nothing when no GPU is free anywhere it may look, and the sweep still does", async () => {
    const fleet = await availableFleet(1, 2);
    const t = await makeTenant(8);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    await submitJob(asT, { name: "all", gpu_count: 2, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test: fill", { scope: "placeable" });
    const waiting = await submitJob(asT, { name: "waits", gpu_count: 2, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
    // other tests' fleets share this database, so a placeable cycle may find their free GPUs; what
    // matters is that this job, of a full type, is not among what it reads
    expect(await read("placeable", [waiting.id])).toEqual([]);
    await runSchedulerCycle("test: the sweep");
    expect((await status(waiting.id)).pendingReason).toMatch(/Needs 2 free .* GPUs; 0 free now/);
  });

  it("the waiting scope gives a full type's work its reason and places nothing, not even what a free GPU could take", async () => {
    const { full, behind, free } = await fullAndOpenTypes();

    const cycle = await runSchedulerCycle("test: waiting work", { scope: "waiting" });
    expect(cycle.placed).toBe(0);
    expect(await status(behind.id)).toEqual({
      status: "queued",
      pendingReason: expect.stringMatching(new RegExp(`Needs 4 free ${full.gpuType} GPUs; 0 free now`)),
    });
    // the job a free GPU can take is the placing cycles' work
    expect(await read("waiting", [free.id])).toEqual([]);
    await runSchedulerCycle("test: an event", { scope: "placeable" });
    expect((await status(free.id)).status).toBe("running");
  });

  it("a reason that did not change is not written again: a steady backlog costs its cycles no write", async () => {
    const full = await availableFleet(1);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    await submitJob(asT, { name: "filler", gpu_count: 8, gpu_type: full.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test: fill", { scope: "placeable" });
    const behind = await submitJob(asT, { name: "behind", gpu_count: 8, gpu_type: full.gpuType, priority: 5, max_retries: 0 });
    await runSchedulerCycle("test: waiting work", { scope: "waiting" });
    const version = async () =>
      (
        await pool().query<{ v: string; reason: string }>(`SELECT xmin::text AS v, pending_reason AS reason FROM jobs WHERE id = $1`, [
          behind.id,
        ])
      ).rows[0]!;
    const first = await version();
    expect(first.reason).toMatch(/Needs 8 free .* GPUs; 0 free now/);
    await runSchedulerCycle("test: waiting work again", { scope: "waiting" });
    await runSchedulerCycle("test: the sweep");
    // the same row version: neither cycle wrote it
    expect(await version()).toEqual(first);
  });

  it("a cycle of the waiting scope never holds up one that places, and writes under the placing lock", async () => {
    const fleet = await availableFleet(1);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const job = await submitJob(asT, { name: "now", gpu_count: 1, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
    // a long cycle of the waiting scope, as a backlog of 10,000 jobs makes it: its lock held meanwhile
    const held = await pool().connect();
    try {
      await held.query("BEGIN");
      await lockForTransaction(held, "scheduler:waiting");
      await runSchedulerCycle("test: an event", { scope: "placeable" });
      expect((await status(job.id)).status).toBe("running");
      await held.query("ROLLBACK");
      // …and the placing lock held (by a cycle, or a change to waiting work): the waiting scope writes
      // nothing until it is free, as every writer of waiting work waits for it (the rest of the node taken first)
      await submitJob(asT, { name: "rest", gpu_count: 7, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
      await runSchedulerCycle("test: fill", { scope: "placeable" });
      const behind = await submitJob(asT, { name: "behind", gpu_count: 8, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 });
      await held.query("BEGIN");
      await lockForTransaction(held, "scheduler");
      // read once the lock is held: before it, another file's cycle could still write the reason
      const submitted = (await status(behind.id)).pendingReason;
      let ended = false;
      const cycle = runSchedulerCycle("test: waiting work", { scope: "waiting" }).finally(() => (ended = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(ended).toBe(false);
      expect((await status(behind.id)).pendingReason).toBe(submitted);
      await held.query("ROLLBACK");
      await cycle;
      expect((await status(behind.id)).pendingReason).toMatch(new RegExp(`Needs 8 free ${fleet.gpuType} GPUs; 0 free now`));
    } finally {
      held.release();
    }
  });

  it("placing and waiting cycles side by side, many at once, all end, and no GPU runs two jobs", async () => {
    const fleet = await availableFleet(1);
    const t = await makeTenant(64);
    const asT = actorFor(tenantAdminPrincipal(t.id));
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push((await submitJob(asT, { name: `side-${i}`, gpu_count: 1, gpu_type: fleet.gpuType, priority: 5, max_retries: 0 })).id);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => runSchedulerCycle(`test: side by side ${i}`, { scope: i % 2 ? "waiting" : "placeable" })),
    );
    const { rows } = await pool().query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY status ORDER BY status`,
      [ids],
    );
    expect(rows).toEqual([
      { status: "queued", n: 4 },
      { status: "running", n: 8 },
    ]);
    const gpus = await pool().query<{ n: number }>(
      `SELECT count(DISTINCT g.id)::int AS n FROM gpus g JOIN nodes n ON n.id = g.node_id WHERE n.cluster_id = $1 AND g.allocated_job_id = ANY($2::uuid[])`,
      [fleet.cluster.id, ids],
    );
    expect(gpus.rows[0]!.n).toBe(8);
  });
});
