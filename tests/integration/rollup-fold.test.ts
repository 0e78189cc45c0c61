import { spawn } from "node:child_process";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { pool } from "@/lib/db/client";
import { FOLD_ROLLUPS_SQL, foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";
import { agentPrincipal, registeredFleet } from "../support/fixtures";

// The ingest statement queues what it stores; folds add the queue into gpu_metrics_1m. These tests
// hold the fold to the rollups' promise: every stored sample counted exactly once, whoever folds,
// however many fold at once, and whatever dies half-way. Other test files fold the same queue at
// the same time (one shared database), which only adds concurrency: assertions are on end states.

const minuteStart = Math.floor(Date.now() / 60_000) * 60_000;
const at = (minutesAgo: number, s: number) => new Date(minuteStart - minutesAgo * 60_000 + s * 1000).toISOString();
// whole numbers, so sums are exact in floating point and rollups can be compared with toEqual
const sample = (uuid: string, when: string, n: number) => ({
  gpu_uuid: uuid,
  recorded_at: when,
  utilization_pct: n % 100,
  memory_used_mb: 1000 + n,
  temperature_c: 30 + (n % 50),
  power_draw_w: 100 + n,
});

/** What the rollups must say: every stored sample of these GPUs, aggregated from the raw rows. */
async function truth(ids: string[]) {
  const { rows } = await pool().query(
    `SELECT gpu_id, date_trunc('minute', recorded_at) AS bucket, count(*)::int AS samples,
            sum(utilization_pct::float8) AS utilization_sum, max(utilization_pct) AS utilization_max, sum(memory_used_mb::float8) AS memory_used_sum,
            max(memory_used_mb) AS memory_used_max, sum(temperature_c::float8) AS temperature_sum, max(temperature_c) AS temperature_max,
            sum(power_draw_w::float8) AS power_sum, max(power_draw_w) AS power_max
       FROM gpu_metrics WHERE gpu_id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2`,
    [ids],
  );
  return rows;
}

async function rollups(ids: string[], client: { query: pg.Pool["query"] } = pool()) {
  const { rows } = await client.query(
    `SELECT gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max, temperature_sum, temperature_max, power_sum, power_max
       FROM gpu_metrics_1m WHERE gpu_id = ANY($1::uuid[]) ORDER BY 1, 2`,
    [ids],
  );
  return rows;
}

async function pendingFor(ids: string[], client: { query: pg.Pool["query"] } = pool()): Promise<number> {
  const { rows } = await client.query(`SELECT count(*)::int AS n FROM gpu_metrics_1m_pending WHERE gpu_ids && $1::uuid[]`, [ids]);
  return rows[0].n;
}

describe("folding queued samples into the per-minute rollups", () => {
  it("counts every stored sample once under concurrent reports, re-sends and concurrent folds", async () => {
    const { cluster, gpus } = await registeredFleet(2);
    const agent = agentPrincipal(cluster.id);
    const ids = gpus.map((g) => g.id);
    // 24 reports over 6 minutes, each sent twice at once (an agent retrying), while three folders run
    const reports = Array.from({ length: 24 }, (_, r) => gpus.map((g, i) => sample(g.uuid, at(7 - (r % 6), r * 2 + (i % 2)), r * 16 + i)));
    let ingesting = true;
    const folder = async () => {
      let passes = 0;
      while (ingesting || passes === 0) {
        await foldGpuRollups({ rowsPerPass: 3 });
        passes++;
      }
    };
    const folders = [folder(), folder(), folder()];
    const results = await Promise.all(reports.flatMap((batch) => [ingestGpuMetrics(agent, batch), ingestGpuMetrics(agent, batch)])).finally(
      () => (ingesting = false),
    );
    await Promise.all(folders);
    await foldGpuRollups();

    const expected = await truth(ids);
    expect(expected.reduce((n, m) => n + m.samples, 0)).toBe(24 * 16);
    expect(results.reduce((n, r) => n + r.stored, 0)).toBe(24 * 16);
    expect(await rollups(ids)).toEqual(expected);
    expect(await pendingFor(ids)).toBe(0);
    // a fold with nothing new to add changes nothing
    await foldGpuRollups();
    expect(await rollups(ids)).toEqual(expected);
  });

  it("adds late samples of an already folded minute to it", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const agent = agentPrincipal(cluster.id);
    const ids = gpus.map((g) => g.id);
    await ingestGpuMetrics(
      agent,
      gpus.map((g, i) => sample(g.uuid, at(3, 10), i)),
    );
    await foldGpuRollups();
    await ingestGpuMetrics(
      agent,
      gpus.map((g, i) => sample(g.uuid, at(3, 40), 50 + i)),
    );
    await foldGpuRollups();
    const folded = await rollups(ids);
    expect(folded.map((m) => m.samples)).toEqual(ids.map(() => 2));
    expect(folded).toEqual(await truth(ids));
  });

  it("leaves a dead fold's samples queued: the next fold counts them, once", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const agent = agentPrincipal(cluster.id);
    const ids = gpus.map((g) => g.id);
    // Another test file's fold may take this test's rows first; then this attempt proves nothing,
    // so it tries again with new samples until its own transaction is the one that took them.
    let exercised = false;
    let sent = 0;
    for (let attempt = 0; attempt < 5 && !exercised; attempt++) {
      await ingestGpuMetrics(
        agent,
        gpus.map((g, i) => sample(g.uuid, at(2, attempt), attempt * 8 + i)),
      );
      sent += 8;
      const folder = new pg.Client({ connectionString: inject("databaseUrl") });
      await folder.connect();
      folder.on("error", () => {});
      const [{ pid }] = (await folder.query("SELECT pg_backend_pid() AS pid")).rows;
      await folder.query("BEGIN");
      await folder.query(FOLD_ROLLUPS_SQL, [1_000]);
      // inside the dying transaction the samples are folded; nobody else sees that yet
      const inside = { pending: await pendingFor(ids, folder), samples: (await rollups(ids, folder)).reduce((n, m) => n + m.samples, 0) };
      const outside = (await rollups(ids)).reduce((n, m) => n + m.samples, 0);
      exercised = inside.pending === 0 && inside.samples === sent && outside === sent - 8;
      // the process dies before it commits
      await pool().query("SELECT pg_terminate_backend($1)", [pid]);
      await folder.end().catch(() => {});
    }
    expect(exercised).toBe(true);
    await foldGpuRollups();
    const folded = await rollups(ids);
    expect(folded).toEqual(await truth(ids));
    expect(folded.reduce((n, m) => n + m.samples, 0)).toBe(sent);
    expect(await pendingFor(ids)).toBe(0);
  });

  it("counts every sample once when a process that ingests and folds is killed at any moment", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const ids = gpus.map((g) => g.id);
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=react-server",
        "tests/support/ingest-and-fold-child.ts",
        cluster.id,
        gpus.map((g) => g.uuid).join(","),
        String(minuteStart - 30 * 60_000),
      ],
      {
        env: { ...process.env, LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    // kill it mid-round (an ingest or a fold under way) once it has finished a few
    let rounds = 0;
    let killing = false;
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        rounds += chunk.toString().split("\n").filter(Boolean).length;
        if (rounds < 5 || killing) return;
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), 10);
      });
      child.on("exit", () => resolve());
      child.on("error", reject);
    });
    expect(rounds).toBeGreaterThanOrEqual(5);
    await foldGpuRollups();
    const expected = await truth(ids);
    expect(expected.reduce((n, m) => n + m.samples, 0)).toBeGreaterThanOrEqual(5 * 2 * 8);
    expect(await rollups(ids)).toEqual(expected);
    expect(await pendingFor(ids)).toBe(0);
  });

  it("drops the queued samples of a GPU deleted before the fold, and folds the rest", async () => {
    const { cluster, nodes, gpus } = await registeredFleet(2);
    const agent = agentPrincipal(cluster.id);
    await ingestGpuMetrics(
      agent,
      gpus.map((g, i) => sample(g.uuid, at(1, 5), i)),
    );
    const [gone, kept] = nodes;
    await pool().query("DELETE FROM nodes WHERE id = $1", [gone!.node.id]);
    await expect(foldGpuRollups()).resolves.toBeDefined();
    const goneIds = gone!.gpus.map((g) => g.id);
    const keptIds = kept!.gpus.map((g) => g.id);
    expect(await rollups(goneIds)).toEqual([]);
    expect(await pendingFor(goneIds)).toBe(0);
    expect(await rollups(keptIds)).toEqual(await truth(keptIds));
    expect((await rollups(keptIds)).map((m) => m.samples)).toEqual(keptIds.map(() => 1));
  });
});
