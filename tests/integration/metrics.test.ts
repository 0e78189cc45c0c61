import { describe, expect, it } from "vitest";
import { db, ingestPool, pool } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";
import { pruneMetrics } from "@/lib/metrics/prune-metrics";
import { fleetUtilizationSeries, gpuMetricSeries } from "@/lib/metrics/queries";
import { rollupClusterMetrics } from "@/lib/metrics/rollup-clusters";
import { actorFor, agentPrincipal, makeCluster, operatorPrincipal, registeredFleet, sweepUntilOffline } from "../support/fixtures";

const minuteAgo = (m: number, s = 0) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - m * 60_000 + s * 1000).toISOString();
const sample = (gpu: { uuid: string }, at: string, util: number, extra: Record<string, unknown> = {}) => ({
  gpu_uuid: gpu.uuid,
  recorded_at: at,
  utilization_pct: util,
  memory_used_mb: 1000,
  temperature_c: 60,
  power_draw_w: 300,
  ...extra,
});

describe("metrics ingestion", () => {
  it("stores a batch once: re-sending it stores nothing twice and the rollups do not double", async () => {
    const { cluster, gpus } = await registeredFleet(2);
    const batch = gpus.map((g, i) => sample(g, minuteAgo(2, i % 60), 50));
    const agent = agentPrincipal(cluster.id);
    const first = await ingestGpuMetrics(agent, batch);
    expect(first).toMatchObject({ accepted: 16, stored: 16, rejected: [] });
    const again = await ingestGpuMetrics(agent, batch);
    expect(again).toMatchObject({ accepted: 16, stored: 0, rejected: [] });
    const ids = gpus.map((g) => g.id);
    expect(await db().gpuMetric.count({ where: { gpuId: { in: ids } } })).toBe(16);
    await foldGpuRollups();
    const roll = await db().gpuMetricMinute.aggregate({ where: { gpuId: { in: ids } }, _sum: { samples: true } });
    expect(roll._sum.samples).toBe(16);
  });

  it("rejects bad samples by index and stores the rest", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const other = await registeredFleet(1);
    const batch = [
      sample(gpus[0]!, minuteAgo(1), 10),
      sample(gpus[1]!, minuteAgo(1), 150), // out of range
      { ...sample(gpus[2]!, minuteAgo(1), 10), temperature_c: "hot" }, // wrong type
      sample({ uuid: "GPU-does-not-exist" }, minuteAgo(1), 10), // unknown GPU
      sample(other.gpus[0]!, minuteAgo(1), 10), // another cluster's GPU
      { utilization_pct: 1, memory_used_mb: 1, temperature_c: 1, power_draw_w: 1 }, // no GPU named
      sample(gpus[3]!, new Date(Date.now() + 3_600_000).toISOString(), 10), // the future
      "not an object",
      sample(gpus[4]!, minuteAgo(1), 99.5),
    ];
    const r = await ingestGpuMetrics(agentPrincipal(cluster.id), batch);
    expect(r.accepted).toBe(2);
    expect(r.stored).toBe(2);
    expect(r.rejected.map((x) => x.index)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(r.rejected.find((x) => x.index === 1)!.error).toMatch(/utilization_pct/);
    expect(r.rejected.find((x) => x.index === 2)!.error).toMatch(/temperature_c/);
    expect(r.rejected.find((x) => x.index === 4)!.error).toMatch(/No such GPU in this cluster/);
    expect(await db().gpuMetric.count({ where: { gpuId: other.gpus[0]!.id } })).toBe(0);
  });

  it("refuses more than 5,000 samples in one request", async () => {
    const { cluster } = await registeredFleet(1);
    const err = await ingestGpuMetrics(
      agentPrincipal(cluster.id),
      Array.from({ length: 5_001 }, () => ({})),
    ).catch((e) => e);
    expect(err.code).toBe("payload_too_large");
  });

  it("writes concurrent reports of different agents together yet answers each for itself, within its own cluster or node", async () => {
    const x = await registeredFleet(2);
    const y = await registeredFleet(1);
    // 24 reports at once: more than the concurrent statements allowed, so they are grouped
    const calls = Array.from({ length: 24 }, (_, i) => {
      // every third report is cluster Y's agent naming cluster X's GPUs, and every eighth a key
      // bound to X's first node naming its second node's: refused, whatever they are grouped with
      const kind = i % 3 === 2 ? "other cluster" : i % 8 === 1 ? "other node" : i % 8 === 0 ? "own node" : "own cluster";
      const agent =
        kind === "other cluster"
          ? agentPrincipal(y.cluster.id)
          : kind.endsWith("node")
            ? agentPrincipal(x.cluster.id, x.nodes[0]!.node.id)
            : agentPrincipal(x.cluster.id);
      const gpus = x.nodes[kind === "other node" ? 1 : kind === "own node" ? 0 : i % 2]!.gpus;
      return ingestGpuMetrics(
        agent,
        gpus.map((g, k) => sample(g, minuteAgo(2, i * 2 + (k % 2)), 10 + k)),
      ).then((r) => ({ kind, r }));
    });
    const results = await Promise.all(calls);
    for (const { kind, r } of results) {
      if (kind.startsWith("own")) expect(r).toMatchObject({ accepted: 8, rejected: [] });
      else {
        const error = kind === "other node" ? "gpu: No such GPU on this key's node" : "gpu: No such GPU in this cluster";
        expect(r).toMatchObject({ accepted: 0, stored: 0, rejected: Array.from({ length: 8 }, (_, index) => ({ index, error })) });
      }
    }
    expect(results.filter((c) => c.kind === "other node")).toHaveLength(2);
    const stored = results.filter((c) => c.kind.startsWith("own")).reduce((n, c) => n + c.r.stored, 0);
    const [{ n }] = await db().$queryRaw<
      [{ n: number }]
    >`SELECT count(*)::int AS n FROM gpu_metrics WHERE gpu_id = ANY(${x.gpus.map((g) => g.id)}::uuid[])`;
    expect(stored).toBe(n);
    expect(n).toBe(results.filter((c) => c.kind.startsWith("own")).length * 8);
    expect(y.gpus.length).toBe(8);
  });

  it("writes telemetry without waiting for the WAL flush, and only telemetry: the main pool stays durable", async () => {
    // (this test server runs without fsync as a whole, so the main pool is checked for not overriding the server's setting)
    const setting = (c: typeof pool) =>
      c()
        .query<{ setting: string; source: string }>("SELECT setting, source FROM pg_settings WHERE name = 'synchronous_commit'")
        .then((r) => r.rows[0]!);
    expect(await setting(ingestPool)).toEqual({ setting: "off", source: "client" });
    expect((await setting(pool)).source).not.toBe("client");
  });

  it("keeps exact per-minute rollups under parallel batches for the same GPUs and minute, once folded", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const agent = agentPrincipal(cluster.id);
    const batches = Array.from({ length: 6 }, (_, b) =>
      gpus.map((g) => sample(g, minuteAgo(3, b * 5), 10 * (b + 1), { temperature_c: 50 + b })),
    );
    const results = await Promise.all(batches.map((batch) => ingestGpuMetrics(agent, batch)));
    expect(results.reduce((n, r) => n + r.stored, 0)).toBe(48);
    await foldGpuRollups();
    for (const g of gpus) {
      const m = await db().gpuMetricMinute.findFirstOrThrow({ where: { gpuId: g.id } });
      expect(m.samples).toBe(6);
      expect(m.utilizationSum).toBeCloseTo(10 + 20 + 30 + 40 + 50 + 60);
      expect(m.utilizationMax).toBe(60);
      expect(m.temperatureMax).toBe(55);
    }
  });

  it("a fatal XID in a sample marks its GPU unhealthy", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    await ingestGpuMetrics(agentPrincipal(cluster.id), [
      sample(gpus[0]!, minuteAgo(0), 5, { xid_errors: [79] }),
      sample(gpus[1]!, minuteAgo(0), 5, { xid_errors: [13] }),
    ]);
    expect((await db().gpu.findUniqueOrThrow({ where: { id: gpus[0]!.id } })).status).toBe("unhealthy");
    expect((await db().gpu.findUniqueOrThrow({ where: { id: gpus[1]!.id } })).status).toBe("available");
  });

  it("a fatal XID grouped with plain reports marks only its GPU, and only its caller hears of it", async () => {
    const { cluster, nodes } = await registeredFleet(3);
    const agent = agentPrincipal(cluster.id);
    const [sick, ...well] = nodes;
    const reports = [
      ingestGpuMetrics(
        agent,
        sick!.gpus.map((g, k) => sample(g, minuteAgo(1, 7), 50, k === 3 ? { xid_errors: [13, 79] } : {})),
      ),
      ...well.flatMap((n) =>
        [0, 1, 2].map((s) =>
          ingestGpuMetrics(
            agent,
            n.gpus.map((g) => sample(g, minuteAgo(1, s), 50, { xid_errors: [13] })),
          ),
        ),
      ),
    ];
    const [sickResult, ...wellResults] = await Promise.all(reports);
    expect(sickResult!.fatalNodeIds).toEqual([sick!.node.id]);
    for (const r of wellResults) expect(r).toMatchObject({ accepted: 8, stored: 8, fatalNodeIds: [] });
    const statuses = await db().gpu.findMany({
      where: { nodeId: { in: nodes.map((n) => n.node.id) } },
      select: { id: true, status: true, lastXid: true },
    });
    expect(statuses.filter((g) => g.status === "unhealthy")).toEqual([{ id: sick!.gpus[3]!.id, status: "unhealthy", lastXid: 79 }]);
  });

  it("refreshes the heartbeat of a node that reports metrics (at most every few seconds)", async () => {
    const { cluster, nodes, gpus } = await registeredFleet(2);
    const stale = new Date(Date.now() - 60_000);
    await db().node.updateMany({ where: { id: { in: nodes.map((n) => n.node.id) } }, data: { lastHeartbeatAt: stale } });
    await ingestGpuMetrics(agentPrincipal(cluster.id), [sample(gpus[0]!, minuteAgo(0), 5)]);
    const [reporting, silent] = await Promise.all(nodes.map((n) => db().node.findUniqueOrThrow({ where: { id: n.node.id } })));
    expect(reporting!.lastHeartbeatAt!.getTime()).toBeGreaterThan(Date.now() - 10_000);
    expect(silent!.lastHeartbeatAt!.getTime()).toBe(stale.getTime());
  });

  it("counts as a heartbeat, bringing an offline node back to where it was", async () => {
    const { cluster, nodes, gpus } = await registeredFleet(1);
    const node = nodes[0]!.node;
    await recordHeartbeat(actorFor(agentPrincipal(cluster.id)), node.id, {});
    await db().$executeRaw`UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE id = ${node.id}::uuid`;
    await sweepUntilOffline(node.id);
    expect((await db().node.findUniqueOrThrow({ where: { id: node.id } })).status).toBe("offline");
    await ingestGpuMetrics(agentPrincipal(cluster.id), [sample(gpus[0]!, minuteAgo(0), 5)]);
    const after = await db().node.findUniqueOrThrow({ where: { id: node.id } });
    expect(after.status).toBe("available");
    expect(after.lastHeartbeatAt!.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe("metric series", () => {
  it("serves raw points for short steps and rollups for minute steps, with the same averages", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    const g = gpus[0]!;
    const batch = [0, 15, 30, 45].flatMap((s) => [sample(g, minuteAgo(5, s), 20), sample(g, minuteAgo(4, s), 60)]);
    await ingestGpuMetrics(agentPrincipal(cluster.id), batch);
    await foldGpuRollups();
    const from = minuteAgo(5);
    const to = minuteAgo(3);
    const raw = await gpuMetricSeries(operatorPrincipal, g.id, { from, to, step: 30 });
    expect(raw.source).toBe("raw");
    expect(raw.points).toHaveLength(4);
    const rolled = await gpuMetricSeries(operatorPrincipal, g.id, { from, to, step: 60 });
    expect(rolled.source).toBe("rollup");
    expect(rolled.points.map((p) => [p.utilization_avg, p.samples])).toEqual([
      [20, 4],
      [60, 4],
    ]);
    const two = await gpuMetricSeries(operatorPrincipal, g.id, { from, to, step: 120 });
    expect(two.points).toEqual([expect.objectContaining({ utilization_avg: 40, utilization_max: 60, samples: 8 })]);
  });

  it("refuses inverted ranges and steps that would return too many points, naming the field", async () => {
    const { gpus } = await registeredFleet(1);
    const e1 = await gpuMetricSeries(operatorPrincipal, gpus[0]!.id, { from: minuteAgo(0), to: minuteAgo(5) }).catch((e) => e);
    expect(e1.details[0].path).toBe("from");
    const e2 = await gpuMetricSeries(operatorPrincipal, gpus[0]!.id, { from: minuteAgo(60 * 24 * 7), to: minuteAgo(0), step: 1 }).catch(
      (e) => e,
    );
    expect(e2.details[0].path).toBe("step");
  });

  it("hides another cluster's GPU from an agent", async () => {
    const { gpus } = await registeredFleet(1);
    const other = await makeCluster();
    const err = await gpuMetricSeries(agentPrincipal(other.id), gpus[0]!.id, {}).catch((e) => e);
    expect(err.code).toBe("not_found");
  });

  it("folds GPU rollups into a cluster series and prunes by retention", async () => {
    const { cluster, gpus } = await registeredFleet(1);
    await ingestGpuMetrics(
      agentPrincipal(cluster.id),
      gpus.map((g) => sample(g, minuteAgo(1), 40)),
    );
    await foldGpuRollups();
    await rollupClusterMetrics(10);
    // the series covers the whole range, bucket by bucket: minutes without rollups are gaps (null), not skipped
    const to = new Date();
    const series = await fleetUtilizationSeries({ from: new Date(to.getTime() - 3_600_000), to, stepS: 60 }, cluster.id);
    expect(series.points.length).toBeGreaterThanOrEqual(60);
    expect(series.points.length).toBeLessThanOrEqual(61);
    expect(series.points.filter((p) => p.utilization !== null)).toEqual([
      expect.objectContaining({ t: Math.floor((Date.now() - 60_000) / 60_000) * 60_000, utilization: 40 }),
    ]);
    expect(series.points[0]!.utilization).toBeNull();

    await db().$executeRaw`INSERT INTO gpu_metrics (gpu_id, recorded_at, utilization_pct, memory_used_mb, temperature_c, power_draw_w)
      VALUES (${gpus[0]!.id}::uuid, now() - interval '30 days', 1, 1, 1, 1)`;
    const pruned = await pruneMetrics({ rawHours: 24, rollupDays: 365 });
    expect(pruned.raw_deleted).toBeGreaterThanOrEqual(1);
    expect(await db().gpuMetric.count({ where: { gpuId: gpus[0]!.id } })).toBe(1);
  });
});
