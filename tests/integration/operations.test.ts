import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestAlertmanager } from "@/lib/alerts/ingest-alertmanager";
import type { AlertmanagerWebhook } from "@/lib/alerts/alertmanager-schemas";
import { db } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { ingestGpuMetrics } from "@/lib/metrics/ingest-gpu-metrics";
import { fleetRegistry } from "@/lib/observability/fleet-gauges";
import { metricsExposition } from "@/lib/observability/exposition";
import { processMetrics } from "@/lib/observability/process-metrics";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { actorFor, agentPrincipal, availableFleet, inventory, makeCluster, unique } from "../support/fixtures";
import { parseExposition } from "../support/prometheus";
import { takeAlertEvaluationTurn } from "../support/test-turns";

const PER_GPU = new Set(["gpuforge_gpu_healthy", "gpuforge_gpu_utilization_percent"]);

describe("Prometheus exposition", () => {
  it("serves the fleet's gauges and this process's figures in valid text format, with the fleet's own labels", async () => {
    const { cluster, gpuType, nodes } = await availableFleet(2, 2);
    await ingestGpuMetrics(agentPrincipal(cluster.id), [
      { gpu_uuid: nodes[0]!.gpus[0]!.uuid, utilization_pct: 73, memory_used_mb: 1, temperature_c: 50, power_draw_w: 100 },
    ]);
    await foldGpuRollups(); // the per-GPU utilization comes from the rollups
    await runSchedulerCycle("metrics test");
    const { contentType, body } = await metricsExposition();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const x = parseExposition(body);
    const name = (await db().cluster.findUniqueOrThrow({ where: { id: cluster.id } })).name;
    expect(x.of("gpuforge_gpus").filter((s) => s.labels.cluster === name && s.labels.gpu_type === gpuType)).toEqual([
      { name: "gpuforge_gpus", labels: { cluster: name, gpu_type: gpuType, state: "idle" }, value: 4 },
    ]);
    expect(x.of("gpuforge_nodes").find((s) => s.labels.cluster === name)).toMatchObject({ labels: { status: "available" }, value: 2 });
    const util = x.of("gpuforge_gpu_utilization_percent").find((s) => s.labels.node === nodes[0]!.node.hostname && s.labels.gpu === "0");
    expect(util).toMatchObject({ labels: { cluster: name, gpu_type: gpuType }, value: 73 });
    expect(x.of("gpuforge_gpu_healthy").filter((s) => s.labels.cluster === name)).toHaveLength(4);
    for (const m of [
      "gpuforge_remediation_cap",
      "gpuforge_remediations_in_window",
      "gpuforge_notifications_backlog",
      "gpuforge_work_running",
      "gpuforge_gpu_series_truncated",
      "gpuforge_metrics_rollup_queue",
      "gpuforge_metrics_rollup_queue_oldest_seconds",
    ])
      expect(x.of(m).length, m).toBeGreaterThan(0);
    expect(x.types.get("gpuforge_scheduler_cycle_duration_seconds")).toBe("histogram");
    expect(x.of("gpuforge_scheduler_cycle_duration_seconds").find((s) => s.name.endsWith("_count"))!.value).toBeGreaterThanOrEqual(1);
    expect(x.of("gpuforge_ingest_samples_total").find((s) => s.labels.outcome === "stored")!.value).toBeGreaterThanOrEqual(1);
    expect(x.types.get("gpuforge_process_cpu_user_seconds_total")).toBe("counter");
  });

  it("the shipped Grafana dashboard asks only for series this exposition serves, with unique panel ids", async () => {
    const dashboard = JSON.parse(readFileSync(path.join(process.cwd(), "public/grafana/gpuforge-dashboard.json"), "utf8")) as {
      panels: Array<{ id: number; type: string; targets?: Array<{ expr: string }> }>;
    };
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const served = parseExposition((await metricsExposition()).body).types;
    const asked = new Set(exprs.flatMap((e) => e.match(/gpuforge_[a-z0-9_]+/g) ?? []).map((n) => n.replace(/_(bucket|sum|count)$/, "")));
    for (const name of asked) expect(served.has(name), `${name} is not in /api/metrics`).toBe(true);
  });

  it("keeps label cardinality bounded as the fleet grows: only per-GPU series grow, one per GPU, and they stop at the cap", async () => {
    const cluster = await makeCluster();
    const gpuType = unique("P").replace(/-/g, "").slice(0, 12).toUpperCase();
    const agent = actorFor(agentPrincipal(cluster.id));
    const addNodes = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await registerNode(agent, { hostname: unique("grow"), gpus: inventory(8, gpuType) });
        await recordHeartbeat(agent, r.node.id, {});
      }
    };
    const seriesCounts = async () => {
      const x = parseExposition(await (await fleetRegistry({ fresh: true })).metrics());
      const counts = new Map<string, number>();
      const labelKeys = new Map<string, string>();
      for (const s of x.samples) {
        counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
        labelKeys.set(s.name, Object.keys(s.labels).sort().join(","));
      }
      return { counts, labelKeys };
    };
    await addNodes(2);
    const before = await seriesCounts();
    await addNodes(6); // 48 more GPUs of the same cluster and type
    const after = await seriesCounts();
    for (const [name, n] of after.counts) {
      if (PER_GPU.has(name)) continue;
      // other test files add clusters and statuses to the shared database meanwhile; ours adds nothing
      expect(after.labelKeys.get(name), name).toBe(before.labelKeys.get(name));
      expect(n, `${name} grew with the fleet`).toBeLessThanOrEqual((before.counts.get(name) ?? 0) + 12);
    }
    expect((after.counts.get("gpuforge_gpu_healthy") ?? 0) - (before.counts.get("gpuforge_gpu_healthy") ?? 0)).toBeGreaterThanOrEqual(48);
    // and at the cap, per-GPU series stop, and say so
    const capped = parseExposition(await (await fleetRegistry({ fresh: true, maxGpuSeries: 10 })).metrics());
    expect(capped.of("gpuforge_gpu_healthy")).toHaveLength(10);
    expect(capped.of("gpuforge_gpu_series_truncated")[0]!.value).toBe(1);
  });

  it("counts this process's API requests by operation, method and status class", () => {
    const m = processMetrics();
    m.httpDuration.observe({ operation: "submitJob", method: "POST", status_class: "2xx" }, 0.012);
    expect(m.registry.getSingleMetric("gpuforge_http_request_duration_seconds")).toBeDefined();
  });
});

const alert = (
  labels: Record<string, string>,
  o: Partial<AlertmanagerWebhook["alerts"][number]> = {},
): AlertmanagerWebhook["alerts"][number] => ({
  status: "firing",
  labels,
  annotations: { summary: "from the test" },
  startsAt: new Date().toISOString(),
  fingerprint: unique("fp"),
  ...o,
});
const payload = (alerts: AlertmanagerWebhook["alerts"]): AlertmanagerWebhook => ({
  version: "4",
  groupKey: "{}:{}",
  status: alerts.some((a) => a.status === "firing") ? "firing" : "resolved",
  receiver: "gpuforge",
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: "http://alertmanager:9093",
  alerts,
});

async function world() {
  const { cluster, nodes } = await availableFleet(2, 2);
  return { cluster, a: nodes[0]!, b: nodes[1]! };
}

const counts = async (nodeId: string) => ({
  events: await db().alertEvent.count({ where: { nodeId } }),
  firing: await db().alertEvent.count({ where: { nodeId, status: "firing" } }),
  remediations: await db().remediation.count({ where: { nodeId } }),
  nodeEvents: await db().nodeEvent.count({ where: { nodeId } }),
  audit: await db().auditLog.count({ where: { targetId: nodeId } }),
});

describe("Alertmanager intake", () => {
  // its quarantines count against the remediation cap of the whole database, as alerts.test.ts's do
  let release: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    release = await takeAlertEvaluationTurn();
  });
  afterAll(async () => {
    await release?.();
  });

  it("maps dcgm-exporter alerts to GPUs by UUID, quarantines through the remediation path, resolves, and changes nothing on replays", async () => {
    const { a } = await world();
    const gpu = a.gpus[1]!;
    const fatal = alert({ alertname: "GPUFatalXid", severity: "critical", Hostname: "not-the-hostname", UUID: gpu.uuid, gpu: "1" });
    const first = await ingestAlertmanager(payload([fatal]), { cap: 1_000 });
    expect(first).toMatchObject({
      received: 1,
      fired: 1,
      resolved: 0,
      remediation: { quarantined: [a.node.id], capped: [] },
      unmatched: [],
    });
    const event = await db().alertEvent.findFirstOrThrow({ where: { nodeId: a.node.id, ruleType: "external" } });
    expect(event).toMatchObject({
      subjectType: "gpu",
      subjectId: gpu.id,
      severity: "critical",
      status: "firing",
      subjectLabel: `${a.node.hostname} GPU 1`,
    });
    expect((await db().node.findUniqueOrThrow({ where: { id: a.node.id } })).status).toBe("quarantined");
    expect(await db().remediation.findFirst({ where: { nodeId: a.node.id } })).toMatchObject({
      cause: "alertmanager:GPUFatalXid",
      outcome: "quarantined",
      alertEventId: event.id,
    });

    const settled = await counts(a.node.id);
    expect(await ingestAlertmanager(payload([fatal]), { cap: 1_000 })).toMatchObject({
      fired: 0,
      remediation: { quarantined: [], capped: [] },
    });
    expect(await counts(a.node.id)).toEqual(settled);

    const resolved = { ...fatal, status: "resolved" as const, endsAt: new Date().toISOString() };
    expect(await ingestAlertmanager(payload([resolved]))).toMatchObject({ resolved: 1 });
    expect((await db().alertEvent.findUniqueOrThrow({ where: { id: event.id } })).status).toBe("resolved");
    const afterResolve = await counts(a.node.id);
    expect(await ingestAlertmanager(payload([resolved]))).toMatchObject({ resolved: 0 });
    expect(await counts(a.node.id)).toEqual(afterResolve);
  });

  it("matches by hostname or instance, notifies only what the operator's list or the alert's own label asks, respects the cap, and reports what it cannot match", async () => {
    const { cluster, a, b } = await world();
    const clusterName = (await db().cluster.findUniqueOrThrow({ where: { id: cluster.id } })).name;
    const thermal = alert({ alertname: "GPUThermalWarning", severity: "warning", instance: `${a.node.hostname}:9400` });
    const quarantineByLabel = alert({
      alertname: "SomethingCustom",
      severity: "page",
      Hostname: b.node.hostname,
      cluster: clusterName,
      gpuforge_action: "quarantine",
    });
    const r = await ingestAlertmanager(
      payload([thermal, quarantineByLabel, alert({ alertname: "Lost", instance: "nowhere:1" }), alert({ alertname: "NoTarget" })]),
      { cap: 0 },
    );
    expect(r.fired).toBe(2);
    // the thermal warning is recorded, not acted on; the labelled one is past a cap of 0: a human decides
    expect(r.remediation).toEqual({ quarantined: [], capped: [b.node.id] });
    expect(r.unmatched.map((u) => u.index)).toEqual([2, 3]);
    expect((await db().alertEvent.findFirstOrThrow({ where: { nodeId: a.node.id, ruleType: "external" } })).severity).toBe("warning");
    expect((await db().node.findUniqueOrThrow({ where: { id: b.node.id } })).status).toBe("available");
    expect(await db().alertEvent.count({ where: { nodeId: b.node.id, ruleType: "remediation_capped", status: "firing" } })).toBe(1);
    // a hostname in two clusters needs a cluster label
    const other = await makeCluster();
    await registerNode(actorFor(agentPrincipal(other.id)), { hostname: a.node.hostname, gpus: [] });
    const ambiguous = await ingestAlertmanager(payload([alert({ alertname: "X", Hostname: a.node.hostname })]), { cap: 0 });
    expect(ambiguous.unmatched[0]!.reason).toMatch(/in 2 clusters/);
  });
});
