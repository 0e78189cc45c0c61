import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleet } from "@/lib/api/contracts";
import { db } from "@/lib/db/client";
import { registerNode } from "@/lib/fleet/register-node";
import { createIngestServer } from "../../scripts/ingest-server";
import { submitJob } from "@/lib/jobs/submit-job";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeKey,
  makeTenant,
  placementOf,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";

// The agents' ingest server runs the app's own handlers on plain node:http: same auth, same
// validation, same error shapes, same writes.
let server: ReturnType<typeof createIngestServer>;
let url = "";

beforeAll(async () => {
  server = createIngestServer("http://127.0.0.1");
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const post = (path: string, key: string | null, body: unknown) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe("ingest server", () => {
  it("counts heartbeats per node: the nodes of a cluster sharing one agent key each have their own budget", async () => {
    const cluster = await makeCluster();
    const { key } = await makeKey({ scope: "agent", cluster_id: cluster.id });
    const { node } = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("budget"), gpus: [] });
    // not a node of this cluster: answered 404, after its heartbeat was counted
    const elsewhere = randomUUID();
    const perNode = fleet.heartbeat.rateLimitPerNodePerMinute!;
    for (let i = 0; i < perNode; i++) expect((await post(`/api/clusters/nodes/${elsewhere}/heartbeat`, key, {})).status).toBe(404);
    expect((await post(`/api/clusters/nodes/${elsewhere}/heartbeat`, key, {})).status).toBe(429);
    // with a budget per key, the cluster's other nodes would now be refused too
    expect((await post(`/api/clusters/nodes/${node.id}/heartbeat`, key, {})).status).toBe(200);
  });

  it("stores metrics and heartbeats for the agent's own cluster, and answers like the app otherwise", async () => {
    const cluster = await makeCluster();
    const other = await makeCluster();
    const { key } = await makeKey({ scope: "agent", cluster_id: cluster.id });
    const inv = inventory(2);
    const { node } = await registerNode(actorFor(agentPrincipal(cluster.id)), { hostname: unique("ingest"), gpus: inv });
    const foreign = await registerNode(actorFor(agentPrincipal(other.id)), { hostname: unique("foreign"), gpus: inventory(1) });

    const sample = (uuid: string) => ({ gpu_uuid: uuid, utilization_pct: 55, memory_used_mb: 100, temperature_c: 60, power_draw_w: 300 });
    const ok = await post("/api/clusters/metrics", key, {
      metrics: [
        sample(inv[0]!.uuid),
        sample(inv[1]!.uuid),
        sample(foreign.gpus[0]!.uuid),
        { gpu_uuid: inv[0]!.uuid, utilization_pct: 900 },
      ],
    });
    expect(ok).toMatchObject({ status: 202, body: { accepted: 2, stored: 2 } });
    expect(ok.body.rejected.map((r: { index: number }) => r.index)).toEqual([2, 3]);
    expect(
      await db().gpuMetric.count({ where: { gpuId: { in: (await db().gpu.findMany({ where: { nodeId: node.id } })).map((g) => g.id) } } }),
    ).toBe(2);

    const hb = await post(`/api/clusters/nodes/${node.id}/heartbeat`, key, { gpus: [] });
    expect(hb).toMatchObject({ status: 200, body: { node: { id: node.id, status: "available" }, assignments: [] } });
    expect((await post(`/api/clusters/nodes/${foreign.node.id}/heartbeat`, key, { gpus: [] })).status).toBe(404);

    expect(await post("/api/clusters/metrics", null, { metrics: [] })).toMatchObject({
      status: 401,
      body: { error: { code: "unauthorized" } },
    });
    expect(await post("/api/clusters/metrics", "gf_not_a_key", { metrics: [] })).toMatchObject({ status: 401 });
    expect(await post("/api/clusters/metrics", key, "{oops")).toMatchObject({
      status: 400,
      body: { error: { code: "validation_failed", details: [{ path: "body" }] } },
    });
    const tooMany = await post("/api/clusters/metrics", key, { metrics: Array.from({ length: 5001 }, () => sample(inv[0]!.uuid)) });
    expect(tooMany).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
    const huge = await post("/api/clusters/metrics", key, `{"metrics":["${"x".repeat(5 * 1024 * 1024)}"]}`);
    expect(huge).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
    // no Content-Length (chunked): refused once the bytes pass the limit, not after buffering them all
    const chunked = await fetch(`${url}/api/clusters/metrics`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 6; i++) c.enqueue(new Uint8Array(1024 * 1024).fill(32));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit).then(async (r) => ({ status: r.status, body: await r.json() }));
    expect(chunked).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
    // within what the server reads, yet over the heartbeat route's own limit
    const bigHeartbeat = await post(`/api/clusters/nodes/${node.id}/heartbeat`, key, `{"gpus":[],"pad":"${"z".repeat(2 * 1024 * 1024)}"}`);
    expect(bigHeartbeat).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
    expect(await post("/api/clusters/metrics", key, "")).toMatchObject({
      status: 400,
      body: { error: { code: "validation_failed", details: [{ path: "body" }] } },
    });
    expect((await post("/api/clusters/nodes/%E0%A4%A/heartbeat", key, { gpus: [] })).status).toBe(404);
    expect(await post("/api/tenants", key, {})).toMatchObject({
      status: 404,
      body: { error: { code: "not_found", request_id: expect.any(String) } },
    });
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
  });

  it("stores job log chunks once each, fenced, for its own cluster's jobs only, as the app does", async () => {
    const { cluster, gpuType } = await availableFleet(1, 2);
    const { key } = await makeKey({ scope: "agent", cluster_id: cluster.id });
    const other = await makeKey({ scope: "agent", cluster_id: (await makeCluster()).id });
    const t = await makeTenant(2);
    const job = await submitJob(actorFor(tenantAdminPrincipal(t.id)), {
      name: "logs",
      gpu_count: 1,
      gpu_type: gpuType,
      priority: 5,
      max_retries: 0,
    });
    await runSchedulerCycle("test: logs on the ingest server");
    const placement = await placementOf(job.id);
    const chunks = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ seq: from + i, stream: i % 2 ? "stderr" : "stdout", text: `line ${from + i}\n` }));
    const path = `/api/jobs/${job.id}/logs`;
    // overlapping batches at once, as an agent re-sending behind a slow network: one group, each chunk once
    const answers = await Promise.all([
      post(path, key, { ...placement, chunks: chunks(0, 50) }),
      post(path, key, { ...placement, chunks: chunks(25, 50) }),
      post(path, key, { ...placement, chunks: chunks(0, 50) }),
    ]);
    for (const a of answers) expect(a).toMatchObject({ status: 202, body: { accepted: 50, truncated: false } });
    expect(answers.reduce((n, a) => n + (a.body as { stored: number }).stored, 0)).toBe(75);
    const rows = await db().workloadLog.findMany({ where: { jobId: job.id }, orderBy: { seq: "asc" }, select: { seq: true, text: true } });
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 75 }, (_, i) => i));
    expect(rows[74]!.text).toBe("line 74\n");
    // another fence, another cluster's key, a bad body
    expect(await post(path, key, { attempt: placement.attempt, fence: randomUUID(), chunks: chunks(75, 1) })).toMatchObject({
      status: 409,
      body: { error: { code: "stale_report" } },
    });
    expect((await post(path, other.key, { ...placement, chunks: chunks(75, 1) })).status).toBe(404);
    expect(await post(path, key, { ...placement, chunks: [] })).toMatchObject({
      status: 400,
      body: { error: { code: "validation_failed", details: [{ path: "chunks" }] } },
    });
    expect(await db().workloadLog.count({ where: { jobId: job.id } })).toBe(75);
  });
});
