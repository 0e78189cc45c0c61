import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { pruneAuditLog } from "@/lib/audit/prune-audit-log";
import { InProcessDriver, type RunRecord } from "@/lib/background/driver";
import { BACKGROUND_EVENTS_CHANNEL, sendToDriver } from "@/lib/background/cross-process";
import { emitEvent } from "@/lib/background/emit";
import { localBus } from "@/lib/background/local-bus";
import { defineJob, type BackgroundJob, type JobInput } from "@/lib/background/types";
import { backgroundLockPool, db, pool } from "@/lib/db/client";
import { backgroundJobs } from "@/lib/background/registry";
import { makeTenant } from "../support/fixtures";

const pools: pg.Pool[] = [];
const newPool = () => {
  const p = new pg.Pool({ connectionString: inject("databaseUrl"), max: 4 });
  pools.push(p);
  return p;
};
afterAll(async () => Promise.all(pools.map((p) => p.end())));

describe("in-process background driver", () => {
  it("every registered job firing in the same second still gets the connections its work needs", async () => {
    // each job's lock is held on a connection for as long as it runs; on the work pool, as many jobs
    // as that pool has connections, firing together, left none for their own queries (a deadlock)
    const size = (pool() as unknown as { options: { max: number } }).options.max;
    const jobs: BackgroundJob[] = Array.from({ length: Math.max(size, backgroundJobs.length) + 2 }, (_, i) => ({
      id: `together-${i}-${Date.now()}`,
      description: "test",
      async run() {
        await pool().query("SELECT pg_sleep(0.05)");
        return {};
      },
    }));
    const locks = new pg.Pool({ connectionString: inject("databaseUrl"), max: jobs.length });
    pools.push(locks);
    const driver = new InProcessDriver(jobs, locks);
    const records = await Promise.race([
      Promise.all(jobs.map((j) => driver.runJob(j, "manual"))),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("jobs starved of connections")), 15_000)),
    ]);
    expect(records.every((r) => r.ran && !r.error)).toBe(true);
    // the app's driver takes its locks from a pool of their own, one connection per registered job
    expect(backgroundLockPool(backgroundJobs.length)).not.toBe(pool());
  });

  it("runs a job on only one app instance at a time (advisory lock)", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    let runs = 0;
    const job: BackgroundJob = {
      id: `lock-test-${Date.now()}`,
      description: "test",
      async run() {
        concurrent++;
        runs++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await new Promise((r) => setTimeout(r, 200));
        concurrent--;
        return {};
      },
    };
    // Two "instances": separate drivers over separate connection pools.
    const a = new InProcessDriver([job], newPool());
    const b = new InProcessDriver([job], newPool());
    const records = await Promise.all([a.runJob(job, "manual"), b.runJob(job, "manual"), a.runJob(job, "manual"), b.runJob(job, "manual")]);
    expect(maxConcurrent).toBe(1);
    expect(records.filter((r) => r.ran)).toHaveLength(runs);
    expect(records.some((r) => !r.ran)).toBe(true);
  });

  it("runs each due time of a schedule once across instances, even when one fires after the other's run ended", async () => {
    let runs = 0;
    const job: BackgroundJob = { id: `due-test-${Date.now()}`, description: "test", everySeconds: 5, run: async () => ({ run: ++runs }) };
    const a = new InProcessDriver([job], newPool());
    const b = new InProcessDriver([job], newPool());
    const due = new Date(Math.floor(Date.now() / 5_000) * 5_000);
    // a fast job and timers a few milliseconds apart (or clocks that differ): no overlap for the lock to catch
    expect((await a.runDue(job, due)).ran).toBe(true);
    expect((await b.runDue(job, due)).ran).toBe(false);
    expect((await a.runDue(job, due)).ran).toBe(false);
    // an instance that fell behind never runs a time older than one already run
    expect((await b.runDue(job, new Date(due.getTime() - 5_000))).ran).toBe(false);
    expect((await b.runDue(job, new Date(due.getTime() + 5_000))).ran).toBe(true);
    // events and manual runs are not scheduled times: they run whenever the lock is free
    expect((await a.runJob(job, "manual")).ran).toBe(true);
    expect(runs).toBe(3);
  });

  it("skips a run, never throws, while the database cannot be reached (a restart): the next tick tries again", async () => {
    const down = new pg.Pool({ connectionString: "postgresql://postgres:postgres@127.0.0.1:1/gone", max: 1 });
    pools.push(down);
    let runs = 0;
    const job: BackgroundJob = { id: `down-test-${Date.now()}`, description: "test", run: async () => ({ run: ++runs }) };
    const driver = new InProcessDriver([job], down);
    expect(await driver.runDue(job, new Date())).toMatchObject({ ran: false, error: expect.stringContaining("ECONNREFUSED") });
    expect(await driver.runJob(job, "event")).toMatchObject({ ran: false });
    expect(runs).toBe(0);
  });

  it("runs event-triggered jobs once per burst of events (debounce) when no Inngest server is configured", async () => {
    const seen: RunRecord[] = [];
    let payload: unknown;
    const job: BackgroundJob = {
      id: `event-test-${Date.now()}`,
      description: "test",
      events: ["platform/tenant.suspended"],
      debounceMs: 100,
      async run({ event }) {
        payload = event?.data;
        return { ok: true };
      },
    };
    const driver = new InProcessDriver([job], newPool(), (r) => seen.push(r));
    driver.start();
    for (let i = 0; i < 5; i++) await emitEvent("platform/tenant.suspended", { tenant_id: `t${i}` });
    await new Promise((r) => setTimeout(r, 600));
    await driver.stop();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ ran: true, trigger: "event", result: { ok: true } });
    expect(payload).toEqual({ tenant_id: "t0" });
  });

  it("runs a job once more when asked while it runs: with the event it ran for, or as a rerun (never as a sweep)", async () => {
    const inputs: JobInput[] = [];
    let release = () => {};
    const job = defineJob({
      id: `rerun-test-${Date.now()}`,
      description: "test",
      // an event no code emits: other files on this database emit the reconcile events all the time
      events: ["platform/audit.prune.requested"],
      async run({ event, rerun }) {
        inputs.push({ event, rerun });
        if (inputs.length % 2 === 1) await new Promise<void>((r) => (release = r));
        return {};
      },
    });
    const driver = new InProcessDriver([job], newPool());
    driver.start();
    try {
      const first = driver.runJob(job, "manual");
      await expect.poll(() => inputs.length).toBe(1);
      expect((await driver.runJob(job, "manual")).ran).toBe(false);
      release();
      await first;
      await expect.poll(() => inputs.length).toBe(2);
      expect(inputs[1]).toEqual({ event: undefined, rerun: true });

      await emitEvent("platform/audit.prune.requested", { requested_by: "first" });
      await expect.poll(() => inputs.length).toBe(3);
      await emitEvent("platform/audit.prune.requested", { requested_by: "while it ran" });
      release();
      await expect.poll(() => inputs.length).toBe(4);
      expect(inputs[2]!.event).toEqual({ name: "platform/audit.prune.requested", data: { requested_by: "first" } });
      expect(inputs[3]).toEqual({ event: inputs[2]!.event, rerun: undefined });
    } finally {
      release();
      await driver.stop();
    }
  });

  it("hears, through the database, events from a process that runs no driver (the ingest server)", async () => {
    const channel = `events_test_${Date.now()}`;
    const payloads: unknown[] = [];
    const job: BackgroundJob = {
      id: `cross-test-${Date.now()}`,
      description: "test",
      events: ["alerts/evaluate.requested"],
      async run({ event }) {
        payloads.push(event?.data);
        return {};
      },
    };
    const driver = new InProcessDriver([job], newPool(), undefined, { listenChannel: channel });
    driver.start();
    try {
      // the listener connects in the background; send until the driver has heard one (several sent
      // before that may still arrive after it: every one heard must be what was sent)
      for (let i = 0; i < 400 && payloads.length === 0; i++) {
        await sendToDriver("alerts/evaluate.requested", { reason: "fatal XID reported" }, channel);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(payloads[0]).toEqual({ reason: "fatal XID reported" });
      // a malformed or unknown event is dropped; the driver keeps listening and hears the next one
      await pools[0]!.query("SELECT pg_notify($1, $2)", [
        channel,
        JSON.stringify({ name: "alerts/evaluate.requested", data: { reason: 42 } }),
      ]);
      await pools[0]!.query("SELECT pg_notify($1, $2)", [channel, "{not json"]);
      await sendToDriver("alerts/evaluate.requested", { reason: "after the malformed ones" }, channel);
      await expect
        .poll(() => payloads.some((p) => JSON.stringify(p) === JSON.stringify({ reason: "after the malformed ones" })), { timeout: 20_000 })
        .toBe(true);
      expect(
        payloads.every(
          (p) =>
            JSON.stringify(p) === JSON.stringify({ reason: "fatal XID reported" }) ||
            JSON.stringify(p) === JSON.stringify({ reason: "after the malformed ones" }),
        ),
      ).toBe(true);
    } finally {
      await driver.stop();
    }
  });

  it("sends an event through the database when this process runs no driver", async () => {
    expect(localBus.listenerCount("event")).toBe(0);
    const listener = new pg.Client({ connectionString: inject("databaseUrl") });
    await listener.connect();
    try {
      await listener.query(`LISTEN ${BACKGROUND_EVENTS_CHANNEL}`);
      // other test files' processes send on this channel too: wait for this one
      const reason = `metrics arrived ${Date.now()}`;
      const heard = new Promise<unknown>((resolve) =>
        listener.on("notification", (n) => {
          if (n.payload?.includes(reason)) resolve(JSON.parse(n.payload));
        }),
      );
      await emitEvent("alerts/evaluate.requested", { reason });
      expect(await heard).toEqual({ name: "alerts/evaluate.requested", data: { reason } });
    } finally {
      await listener.end();
    }
  });

  it("reports a failing job instead of crashing the driver", async () => {
    const job: BackgroundJob = { id: `fail-test-${Date.now()}`, description: "t", run: async () => Promise.reject(new Error("boom")) };
    const rec = await new InProcessDriver([job], newPool()).runJob(job, "manual");
    expect(rec).toMatchObject({ ran: true, error: "boom" });
  });

  it("rejects an event whose payload does not match its schema", async () => {
    await expect(emitEvent("platform/tenant.suspended", { tenant_id: 42 } as never)).rejects.toThrow();
  });
});

describe("audit log", () => {
  it("is append-only: an entry cannot be rewritten", async () => {
    const t = await makeTenant();
    await expect(db().$executeRaw`UPDATE audit_log SET action = 'forged' WHERE target_id = ${t.id}`).rejects.toThrow(/append-only/);
  });

  it("prunes only entries older than the retention period", async () => {
    const t = await makeTenant();
    await db().$executeRaw`INSERT INTO audit_log (actor_kind, action, target_type, target_id, created_at)
      VALUES ('system', 'old.entry', 'test', ${t.id}, now() - interval '40 days'), ('system', 'new.entry', 'test', ${t.id}, now())`;
    expect((await pruneAuditLog(0)).deleted).toBe(0);
    const { deleted } = await pruneAuditLog(30, 1);
    expect(deleted).toBeGreaterThanOrEqual(1);
    const left = (await db().auditLog.findMany({ where: { targetId: t.id } })).map((e) => e.action);
    expect(left).toContain("new.entry");
    expect(left).not.toContain("old.entry");
  });
});
