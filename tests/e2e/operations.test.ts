import { describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { availableFleet } from "../support/fixtures";
import { api } from "../support/http";
import { E2E_ALERTMANAGER_TOKEN, E2E_METRICS_TOKEN } from "../support/operations-tokens";
import { parseExposition } from "../support/prometheus";

// Prometheus scrapes the app with METRICS_TOKEN; Alertmanager posts with ALERTMANAGER_TOKEN: over
// HTTP, against the production build, with the tokens the server was started with.

describe("operations over HTTP", () => {
  it("serves the exposition to Prometheus' token, with request durations per operation; refuses other tokens", async () => {
    await api("GET", "/api/health");
    const r = await fetch(`${inject("baseUrl")}/api/metrics`, { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    const x = parseExposition(await r.text());
    expect(x.of("gpuforge_gpus").length).toBeGreaterThan(0);
    const ops = new Set(x.of("gpuforge_http_request_duration_seconds").map((s) => s.labels.operation));
    expect(ops.has("getPrometheusMetrics") || ops.has("getHealth")).toBe(true);
    // every operation label is an operation of the document: bounded by the API, not by requests
    const doc = (await api("GET", "/api/openapi.json")).body as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = new Set(Object.values(doc.paths).flatMap((o) => Object.values(o).map((x2) => x2.operationId)));
    for (const op of ops) expect(ids.has(op!), op).toBe(true);
    expect((await api("GET", "/api/metrics", { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}x` } })).status).toBe(401);
    expect((await api("GET", "/api/metrics", { headers: { authorization: `Bearer ${E2E_ALERTMANAGER_TOKEN}` } })).status).toBe(401);
  });

  it("serves the Grafana dashboard the docs link to", async () => {
    const r = await fetch(`${inject("baseUrl")}/grafana/gpuforge-dashboard.json`);
    expect(r.status).toBe(200);
    expect((await r.json()) as { uid: string }).toMatchObject({ uid: "gpuforge-fleet" });
  });

  it("takes Alertmanager's webhook with its token: the alert fires against the GPU it names, and a replay changes nothing", async () => {
    const { nodes } = await availableFleet(1, 2);
    const gpu = nodes[0]!.gpus[0]!;
    const body = {
      version: "4",
      groupKey: '{}:{alertname="GPUThermal"}',
      status: "firing",
      receiver: "gpuforge",
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: "http://alertmanager:9093",
      alerts: [
        {
          status: "firing",
          labels: { alertname: "GPUThermal", severity: "warning", UUID: gpu.uuid },
          annotations: { summary: "hot" },
          startsAt: new Date().toISOString(),
          fingerprint: `fp-${gpu.id}`,
        },
      ],
    };
    const send = () => api("POST", "/api/webhooks/alertmanager", { headers: { authorization: `Bearer ${E2E_ALERTMANAGER_TOKEN}` }, body });
    expect((await send()).body).toMatchObject({ received: 1, fired: 1, unmatched: [] });
    expect((await send()).body).toMatchObject({ received: 1, fired: 0 });
    expect(await db().alertEvent.count({ where: { subjectId: gpu.id, ruleType: "external" } })).toBe(1);
    expect(
      (await api("POST", "/api/webhooks/alertmanager", { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` }, body })).status,
    ).toBe(401);
    expect((await api("POST", "/api/webhooks/alertmanager", { body })).status).toBe(401);
  });
});
