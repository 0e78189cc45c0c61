import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccessGuard } from "@/agent/src/access-guard";
import { startModelServer, type ModelServer } from "@/agent/src/model-server";
import { hashApiKey } from "@/lib/api-keys/key-format";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { systemActor } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { createEndpointKey, revokeEndpointKey } from "@/lib/endpoints/endpoint-keys";
import { endpointSeries } from "@/lib/endpoints/endpoint-metrics";
import { endpointSla } from "@/lib/endpoints/endpoint-sla";
import { createEndpoint } from "@/lib/endpoints/create-endpoint";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { replicaAssignmentsForNode } from "@/lib/endpoints/node-assignments";
import { reportReplicaAddress } from "@/lib/endpoints/report-replica-address";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { changePodState } from "@/lib/pods/change-pod-state";
import { createPod } from "@/lib/pods/create-pod";
import { getPodOrThrow } from "@/lib/pods/queries";
import { reportPodStatus } from "@/lib/pods/report-pod-status";
import { createPodBody } from "@/lib/pods/schemas";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { Gateway } from "@/lib/gateway/gateway";
import { createGatewayServer } from "@/scripts/gateway-server";
import { actorFor, agentPrincipal, availableFleet, makeKey, makeTenant, tenantAdminPrincipal, unique } from "../support/fixtures";
import { codeAndFieldOf } from "../support/outcomes";
import { until } from "../support/wait";

// The inference gateway end to end, in this process: two replicas served by real little model
// servers on their nodes' (loopback) addresses at the host ports their agent reported; a gateway
// process with its own routing table, probes and figures; real HTTP through it.

const loopback = () =>
  `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

let g: Gateway;
let server: http.Server;
let base: string;
let world: Awaited<ReturnType<typeof buildWorld>>;

async function buildWorld() {
  const { cluster, gpuType, nodes } = await availableFleet(3, 2, "G");
  for (const n of nodes) await pool().query(`UPDATE nodes SET address = $2 WHERE id = $1`, [n.node.id, loopback()]);
  const tenant = await makeTenant(8);
  const asT = actorFor(tenantAdminPrincipal(tenant.id));
  const ep = await createEndpoint(asT, {
    name: unique("chat"),
    model: "test/chat",
    gpu_type: gpuType,
    gpus_per_replica: 1,
    replicas: 2,
    cluster_id: cluster.id,
    autoscale_metric: "none",
    cooldown_s: 300,
  });
  const replicas = ep.replicas.filter((r) => r.status !== "stopped");
  const servers = new Map<string, ModelServer>();
  for (const r of replicas) {
    const node = await db().node.findUniqueOrThrow({ where: { id: r.nodeId! } });
    const s = await startModelServer({ model: "test/chat", host: node.address!, complete: (p) => `answer to ${p} from the model` });
    servers.set(r.id, s);
    await reportReplicaAddress(agentPrincipal(cluster.id, r.nodeId!), ep.id, r.id, { attempt: 1, fence: r.fence, host_port: s.port });
  }
  const key = (await makeKey({ scope: "tenant", tenant_id: tenant.id })).key;
  const other = (await makeKey({ scope: "tenant", tenant_id: (await makeTenant(2)).id })).key;
  const other2 = await createEndpoint(asT, {
    name: unique("other"),
    model: "test/other",
    gpu_type: gpuType,
    gpus_per_replica: 1,
    replicas: 1,
    cluster_id: cluster.id,
    autoscale_metric: "none",
    cooldown_s: 300,
  });
  return { cluster, gpuType, nodes, tenant, asT, ep, replicas, servers, key, other, otherEndpoint: other2 };
}

type Reply = { status: number; headers: http.IncomingHttpHeaders; body: string; chunks: number };

function call(
  path: string,
  opts: { key?: string; method?: string; body?: unknown; rawBody?: Buffer; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = opts.rawBody ?? (opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body)));
    const req = http.request(base + path, {
      method: opts.method ?? (payload ? "POST" : "GET"),
      headers: {
        ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
        ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}),
        ...opts.headers,
      },
    });
    req.on("response", (res) => {
      let body = "";
      let chunks = 0;
      res.on("data", (c: Buffer) => {
        chunks++;
        body += c.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, chunks }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

const chat = (content: string, stream = false) => ({ messages: [{ role: "user", content }], ...(stream ? { stream: true } : {}) });

beforeAll(async () => {
  world = await buildWorld();
  // a gateway process of its own, probing often, writing its figures only when told to
  g = await new Gateway({
    refreshMs: 100,
    probeIntervalMs: 60_000,
    flushMs: 600_000,
    timeoutS: 2,
    idleTimeoutS: 2,
    maxBodyBytes: 64 * 1024,
  }).start();
  await g.probeNow();
  server = createGatewayServer(g, "http://127.0.0.1");
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await g?.close();
  for (const s of world?.servers.values() ?? []) await s.close();
});

describe("the gateway routes an endpoint's traffic", () => {
  it("balances over both replicas, least outstanding first", async () => {
    const url = `/v1/endpoints/${world.ep.id}/v1/chat/completions`;
    const seen = new Map<string, number>();
    for (let i = 0; i < 8; i++) {
      const r = await call(url, { key: world.key, body: chat(`q${i}`) });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).choices[0].message.content).toBe(`answer to q${i} from the model`);
      const replica = String(r.headers["x-gpuforge-replica"]);
      seen.set(replica, (seen.get(replica) ?? 0) + 1);
    }
    // one at a time, both replicas are equal: they take turns
    expect([...seen.keys()].sort()).toEqual(world.replicas.map((r) => r.id).sort());
    expect([...seen.values()]).toEqual([4, 4]);

    // a slow replica keeps its requests outstanding longer, so the quick one takes most of the rest
    const [slow, quick] = world.replicas;
    world.servers.get(slow!.id)!.set({ latencyMs: 300 });
    const before = { slow: world.servers.get(slow!.id)!.served, quick: world.servers.get(quick!.id)!.served };
    const lanes = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 8; i++) expect((await call(url, { key: world.key, body: chat("x") })).status).toBe(200);
    });
    await Promise.all(lanes);
    world.servers.get(slow!.id)!.set({ latencyMs: 0 });
    const slowServed = world.servers.get(slow!.id)!.served - before.slow;
    const quickServed = world.servers.get(quick!.id)!.served - before.quick;
    expect(slowServed + quickServed).toBe(32);
    expect(quickServed).toBeGreaterThan(slowServed * 2);
  });

  it("streams server-sent events through as the replica writes them, intact", async () => {
    world.servers.forEach((s) => s.set({ tokenDelayMs: 15 }));
    const r = await call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, {
      key: world.key,
      body: chat("tell me a story about the gateway", true),
    });
    world.servers.forEach((s) => s.set({ tokenDelayMs: 0 }));
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/event-stream/);
    const events = r.body.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const text = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice("data: ".length)).choices[0].delta.content)
      .join("");
    expect(text).toBe("answer to tell me a story about the gateway from the model");
    // it arrived in pieces, as written, not buffered into one
    expect(r.chunks).toBeGreaterThan(3);
  });

  it("takes a replica whose probe fails out of rotation at the next probe, and back in when it passes", async () => {
    const [bad, good] = world.replicas;
    world.servers.get(bad!.id)!.set({ healthy: false });
    await g.probeNow();
    expect(g.prober.inRotation(bad!.id)).toBe(false);
    for (let i = 0; i < 6; i++)
      expect((await call(`/v1/endpoints/${world.ep.id}/v1/models`, { key: world.key })).headers["x-gpuforge-replica"]).toBe(good!.id);
    // three failed probes in a row: the database hears it (the reconciler replaces it if it stays so)
    await g.probeNow();
    await g.probeNow();
    expect(await db().endpointReplica.findUniqueOrThrow({ where: { id: bad!.id } })).toMatchObject({
      status: "unhealthy",
      healthReason: expect.stringMatching(/^gateway health probe failing/),
    });
    world.servers.get(bad!.id)!.set({ healthy: true });
    await g.probeNow();
    expect(g.prober.inRotation(bad!.id)).toBe(true);
    expect((await db().endpointReplica.findUniqueOrThrow({ where: { id: bad!.id } })).status).toBe("ready");
  });

  it("retries once on another replica before any byte was sent: a refused connection (any method), a 503 (idempotent methods)", async () => {
    const [a, b] = world.replicas;
    // replica a's server goes away without a probe noticing: the POST is retried on b
    const port = world.servers.get(a!.id)!.port;
    const host = world.servers.get(a!.id)!.host;
    await world.servers.get(a!.id)!.close();
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, { key: world.key, body: chat("still there?") }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.every((r) => r.headers["x-gpuforge-replica"] === b!.id)).toBe(true);
    expect(g.prober.inRotation(a!.id)).toBe(false);
    // back on the same port, healthy again
    world.servers.set(a!.id, await startModelServer({ model: "test/chat", host, port, complete: (p) => `answer to ${p} from the model` }));
    await g.probeNow();
    expect(g.prober.inRotation(a!.id)).toBe(true);
  });

  it("answers what it cannot serve with the API's errors, and counts them", async () => {
    world.servers.forEach((s) => s.set({ errorRate: 1 }));
    const failed = await call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, { key: world.key, body: chat("boom") });
    // a POST's 500 is the replica's answer: passed through, not retried
    expect(failed.status).toBe(500);
    world.servers.forEach((s) => s.set({ errorRate: 0 }));
    const tooBig = await call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, { key: world.key, rawBody: Buffer.alloc(65 * 1024, 32) });
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body).error.code).toBe("payload_too_large");
    // the endpoint with no replica in rotation
    const none = await call(`/v1/endpoints/${world.otherEndpoint.id}/v1/models`, { key: world.key });
    expect(none.status).toBe(503);
    expect(JSON.parse(none.body).error.code).toBe("unavailable");
  });
});

describe("who may call an endpoint", () => {
  it("the endpoint's tenant and its endpoint keys; another tenant 404; no, bad or revoked keys 401; operators and agents 403", async () => {
    const path = `/v1/endpoints/${world.ep.id}/v1/models`;
    const own = await createEndpointKey(world.asT, world.ep.id, { name: "app" });
    const forOther = await createEndpointKey(world.asT, world.otherEndpoint.id, { name: "elsewhere" });
    const revoked = await makeKey({ scope: "tenant", tenant_id: world.tenant.id });
    await revokeApiKey(systemActor, revoked.apiKey.id);
    const statusOf = async (key?: string, headers: Record<string, string> = {}) => (await call(path, { key, headers })).status;
    expect(await statusOf(world.key)).toBe(200);
    expect(await statusOf(own.key)).toBe(200);
    expect(await statusOf(world.other)).toBe(404);
    expect(await statusOf(forOther.key)).toBe(404);
    expect(await statusOf(undefined)).toBe(401);
    expect(await statusOf(revoked.key)).toBe(401);
    expect(await statusOf(undefined, { authorization: "Bearer gf_nope" })).toBe(401);
    expect(await statusOf((await makeKey({ scope: "operator" })).key)).toBe(403);
    expect(await statusOf((await makeKey({ scope: "agent", cluster_id: world.cluster.id })).key)).toBe(403);
    expect((await call(`/v1/endpoints/not-an-id/v1/models`, { key: world.key })).status).toBe(404);
    expect(
      (await call(`/v1/endpoints/${world.ep.id.replace(/.$/, (c) => (c === "0" ? "1" : "0"))}/v1/models`, { key: world.key })).status,
    ).toBe(404);
    // the same answer for another tenant's endpoint and one that does not exist: nothing leaks
    expect((await call(path, { key: world.other })).body.replace(/"request_id":"[^"]+"/, "")).toBe(
      (await call(`/v1/endpoints/00000000-0000-4000-8000-000000000000/v1/models`, { key: world.other })).body.replace(
        /"request_id":"[^"]+"/,
        "",
      ),
    );
    await revokeEndpointKey(world.asT, world.ep.id, own.endpointKey.id);
    expect(await statusOf(own.key)).toBe(401);
  });

  it("keeps the caller's key, cookies and hop-by-hop headers from the replica, and never lets the path pick the host", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const paths: string[] = [];
    const spy = http.createServer((req, res) => {
      seen.push(req.headers);
      paths.push(req.url ?? "");
      res
        .writeHead(200, {
          "content-type": "application/json",
          connection: "keep-alive, x-internal",
          "x-internal": "secret",
          "keep-alive": "timeout=5",
        })
        .end("{}");
    });
    const { ep, replicas } = world;
    const node = await db().node.findUniqueOrThrow({ where: { id: replicas[0]!.nodeId! } });
    await new Promise<void>((r) => spy.listen(0, node.address!, () => r()));
    const port = (spy.address() as AddressInfo).port;
    // the spy stands in for the first replica (a restart moved its port, say)
    await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [replicas[0]!.id, port]);
    await g.table.refresh();
    await g.probeNow();
    world.servers.get(replicas[1]!.id)!.set({ healthy: false });
    await g.probeNow();
    const r = await call(`/v1/endpoints/${ep.id}//evil.example.com/steal?x=1`, {
      key: world.key,
      headers: {
        cookie: "next-auth.session-token=abc",
        connection: "x-hop",
        "x-hop": "1",
        "proxy-authorization": "Basic x",
        "x-forwarded-for": "6.6.6.6",
        "x-gpuforge-replica": "forged",
      },
    });
    expect(r.status).toBe(200);
    expect(r.headers["x-internal"]).toBeUndefined();
    expect(r.headers["x-gpuforge-replica"]).toBe(replicas[0]!.id);
    const h = seen.at(-1)!;
    expect(h.authorization).toBeUndefined();
    expect(h.cookie).toBeUndefined();
    expect(h["x-hop"]).toBeUndefined();
    expect(h["proxy-authorization"]).toBeUndefined();
    expect(h["x-forwarded-for"]).not.toContain("6.6.6.6");
    expect(h.host).toBe(`${node.address}:${port}`);
    // whatever the path says, the request went to the replica's own address, as a path
    expect(paths.at(-1)).toBe("//evil.example.com/steal?x=1");
    spy.closeAllConnections();
    spy.close();
    world.servers.get(replicas[1]!.id)!.set({ healthy: true });
    await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [
      replicas[0]!.id,
      world.servers.get(replicas[0]!.id)!.port,
    ]);
    await g.table.refresh();
    await g.probeNow();
  });

  it("connects only to nodes' registered addresses that the policy allows: a link-local address written behind its back is never used", async () => {
    const { ep, replicas } = world;
    const node = replicas[0]!.nodeId!;
    const was = (await db().node.findUniqueOrThrow({ where: { id: node } })).address;
    await pool().query(`UPDATE nodes SET address = '169.254.169.254' WHERE id = $1`, [node]);
    await g.table.refresh();
    expect(g.table.get(ep.id)!.replicas.map((r) => r.id)).toEqual([replicas[1]!.id]);
    await pool().query(`UPDATE nodes SET address = $2 WHERE id = $1`, [node, was]);
    await g.table.refresh();
    await g.probeNow();
    expect(g.table.get(ep.id)!.replicas).toHaveLength(2);
  });

  it("takes a replica's address only from the agent of its own node, for its current placement, on an unprivileged port of its own", async () => {
    const { ep, replicas, cluster, nodes } = world;
    const r = replicas[0]!;
    const other = nodes.find((n) => n.node.id !== r.nodeId && n.node.id !== replicas[1]!.nodeId)!.node.id;
    const port = world.servers.get(r.id)!.port;
    expect(
      await codeAndFieldOf(
        reportReplicaAddress(agentPrincipal(cluster.id, other), ep.id, r.id, { attempt: 1, fence: r.fence, host_port: 45000 }),
      ),
    ).toBe("not_found");
    expect(
      await codeAndFieldOf(
        reportReplicaAddress(agentPrincipal((await availableFleet(1, 1, "G")).cluster.id), ep.id, r.id, {
          attempt: 1,
          fence: r.fence,
          host_port: 45000,
        }),
      ),
    ).toBe("not_found");
    expect(
      await codeAndFieldOf(
        reportReplicaAddress(agentPrincipal(cluster.id, r.nodeId!), ep.id, r.id, {
          attempt: 1,
          fence: "00000000-0000-4000-8000-000000000000",
          host_port: 45000,
        }),
      ),
    ).toBe("stale_report");
    expect(
      await codeAndFieldOf(
        reportReplicaAddress(agentPrincipal(cluster.id, r.nodeId!), ep.id, r.id, { attempt: 2, fence: r.fence, host_port: 45000 }),
      ),
    ).toBe("stale_report");
    expect((await db().endpointReplica.findUniqueOrThrow({ where: { id: r.id } })).hostPort).toBe(port);
  });
});

describe("what the gateway records", () => {
  it("the SLA and the charts from the gateway's own figures, with no sample from the serving side", async () => {
    // the probes made the replicas ready (no serving-side sample was ever posted): the endpoint is ready
    await reconcileEndpoints({ endpointId: world.ep.id });
    expect((await getEndpointOrThrow(world.asT.principal, world.ep.id)).status).toBe("ready");
    expect(await db().endpointMetric.count({ where: { endpointId: world.ep.id } })).toBe(0);
    await g.recorder.flush();
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const before = await endpointSla(world.asT.principal, world.ep.id, { from });
    world.servers.forEach((s) => s.set({ errorRate: 1 }));
    for (let i = 0; i < 3; i++)
      expect((await call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, { key: world.key, body: chat("fail") })).status).toBe(500);
    world.servers.forEach((s) => s.set({ errorRate: 0 }));
    for (let i = 0; i < 7; i++)
      expect((await call(`/v1/endpoints/${world.ep.id}/v1/chat/completions`, { key: world.key, body: chat("ok") })).status).toBe(200);
    await g.recorder.flush();
    const after = await endpointSla(world.asT.principal, world.ep.id, { from });
    expect(after.requests - before.requests).toBe(10);
    expect(after.errors - before.errors).toBe(3);
    const rows = await pool().query<{ requests: string; errors: string }>(
      `SELECT sum(requests)::text AS requests, sum(errors)::text AS errors FROM endpoint_gateway_1m WHERE endpoint_id = $1`,
      [world.ep.id],
    );
    expect(Number(rows.rows[0]!.requests)).toBe(after.requests);
    expect(Number(rows.rows[0]!.errors)).toBe(after.errors);
    const series = await endpointSeries(world.asT.principal, world.ep.id, { from });
    expect(series.points.some((p) => p.requests_per_s !== null && p.p95_ms !== null)).toBe(true);
    // a second gateway process adds to the same minutes: figures from many processes sum exactly
    const second = new Gateway({ refreshMs: 60_000, probeIntervalMs: 60_000, flushMs: 600_000 });
    second.recorder.record(world.ep.id, Date.now(), 12, true);
    await second.recorder.flush();
    expect((await endpointSla(world.asT.principal, world.ep.id, { from })).errors).toBe(after.errors + 1);
  });
});

describe("replicas and pods answer the gateway only (the agent's access guard)", () => {
  it("a replica behind its node's guard takes the gateway's requests and probes; anyone else calling its port gets 403", async () => {
    const { ep, replicas } = world;
    const r = replicas[0]!;
    const model = world.servers.get(r.id)!;
    // the secret exactly as the node's agent receives it in its heartbeat
    const assigned = (await replicaAssignmentsForNode(r.nodeId!)).find((a) => a.replica_id === r.id)!;
    const guard = new AccessGuard(assigned.access_secret, { label: `replica ${r.id}` });
    await guard.listen(0, model.host);
    guard.setTarget({ host: model.host, port: model.port });
    try {
      await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [r.id, guard.port]);
      await g.table.refresh();
      await g.probeNow();
      expect(g.prober.inRotation(r.id)).toBe(true);
      world.servers.get(replicas[1]!.id)!.set({ healthy: false });
      await g.probeNow();
      const through = await call(`/v1/endpoints/${ep.id}/v1/chat/completions`, { key: world.key, body: chat("guarded") });
      expect(through.status).toBe(200);
      expect(through.headers["x-gpuforge-replica"]).toBe(r.id);
      expect(JSON.parse(through.body).choices[0].message.content).toBe("answer to guarded from the model");
      // a neighbour on the node's network (or another tenant's container) calling the port itself
      const direct = await new Promise<number>((resolve, reject) =>
        http
          .request({ host: model.host, port: guard.port, path: "/v1/models", agent: false }, (res) => resolve(res.statusCode!))
          .on("error", reject)
          .end(),
      );
      expect(direct).toBe(403);
      // a secret of another placement (the other replica's) opens nothing
      const wrong = (await replicaAssignmentsForNode(replicas[1]!.nodeId!)).find((a) => a.replica_id === replicas[1]!.id)!;
      const withOther = await new Promise<number>((resolve, reject) =>
        http
          .request(
            { host: model.host, port: guard.port, path: "/v1/models", agent: false, headers: { "x-gpuforge-access": wrong.access_secret } },
            (res) => resolve(res.statusCode!),
          )
          .on("error", reject)
          .end(),
      );
      expect(withOther).toBe(403);
      // and a client cannot send the secret header through the gateway to anyone: it is the gateway's own
      const forged = await call(`/v1/endpoints/${ep.id}/v1/models`, { key: world.key, headers: { "x-gpuforge-access": "forged" } });
      expect(forged.status).toBe(200);
    } finally {
      world.servers.get(replicas[1]!.id)!.set({ healthy: true });
      await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [r.id, model.port]);
      guard.close();
      await g.table.refresh();
      await g.probeNow();
    }
  });

  it("a pod's HTTP port through /v1/pods/{id}/ports/{port}: its tenant's keys only; its SSH port and ports it does not serve are 404", async () => {
    const pod = await createPod(
      world.asT,
      createPodBody.parse({
        name: unique("nb"),
        gpu_type: world.gpuType,
        gpu_count: 1,
        image: "runpod/pytorch:2.4.0",
        ports: [8888],
        ssh_public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHxuuJN4z0n9G0mAikmM8JdYo1BeQ0OS3O9GQ9m3mE5W walk@laptop",
        cluster_id: world.cluster.id,
      }),
    );
    await runSchedulerCycle("gateway pods");
    const placed = await db().pod.findUniqueOrThrow({ where: { id: pod.id }, select: { nodeId: true } });
    const beat = await recordHeartbeat(actorFor(agentPrincipal(world.cluster.id)), placed.nodeId!, {});
    const a = beat.assignments.find((x) => x.kind === "pod" && x.pod_id === pod.id);
    if (a?.kind !== "pod") throw new Error("the heartbeat did not assign the pod");
    const node = await db().node.findUniqueOrThrow({ where: { id: placed.nodeId! } });
    const seen: http.IncomingHttpHeaders[] = [];
    const notebook = http.createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader("set-cookie", "planted=1; Path=/");
      res.end(`notebook ${req.method} ${req.url}`);
    });
    await new Promise<void>((r) => notebook.listen(0, node.address!, () => r()));
    const guard = new AccessGuard(a.access_secret, { label: "pod" });
    await guard.listen(0, node.address!);
    guard.setTarget({ host: node.address!, port: (notebook.address() as AddressInfo).port });
    try {
      await reportPodStatus(agentPrincipal(world.cluster.id, placed.nodeId!), pod.id, {
        attempt: a.attempt,
        fence: a.fence,
        status: "running",
        ports: [
          { container_port: 22, host_port: 45_022 },
          { container_port: 8888, host_port: guard.port },
        ],
      });
      const shown = await getPodOrThrow(world.asT.principal, pod.id);
      expect(shown.ports).toEqual([
        { container_port: 22, host_port: 45_022, access: "ssh", url: null },
        {
          container_port: 8888,
          host_port: guard.port,
          access: "gateway",
          url: expect.stringMatching(new RegExp(`/v1/pods/${pod.id}/ports/8888/$`)),
        },
      ]);
      await g.table.refresh();
      const base = `/v1/pods/${pod.id}/ports/8888`;
      const ok = await call(`${base}/lab/tree?token=x`, { key: world.key });
      expect(ok.status).toBe(200);
      expect(ok.body).toBe("notebook GET /lab/tree?token=x");
      // what reached the pod: not the tenant's key, not the access secret; what came back: no cookie for the console's origin
      expect(seen.at(-1)!.authorization).toBeUndefined();
      expect(seen.at(-1)!["x-gpuforge-access"]).toBeUndefined();
      expect(seen.at(-1)!["x-gpuforge-pod"]).toBe(pod.id);
      expect(ok.headers["set-cookie"]).toBeUndefined();
      const endpointKey = await createEndpointKey(world.asT, world.ep.id, { name: "not-for-pods" });
      expect((await call(`${base}/`, { key: world.other })).status).toBe(404);
      expect((await call(`${base}/`, { key: endpointKey.key })).status).toBe(404);
      expect((await call(`${base}/`)).status).toBe(401);
      expect((await call(`${base}/`, { key: (await makeKey({ scope: "operator" })).key })).status).toBe(403);
      expect((await call(`/v1/pods/${pod.id}/ports/22/`, { key: world.key })).status).toBe(404);
      expect((await call(`/v1/pods/${pod.id}/ports/9999/`, { key: world.key })).status).toBe(404);
      expect((await call(`/v1/pods/${pod.id}/ports/99999/`, { key: world.key })).status).toBe(404);
      expect((await call(`/v1/pods/not-a-pod/ports/8888/`, { key: world.key })).status).toBe(404);
      // the pod stops: its port is gone from the gateway at once
      await changePodState(world.asT, pod.id, "stop");
      await g.table.refresh();
      expect((await call(`${base}/`, { key: world.key })).status).toBe(404);
    } finally {
      guard.close();
      notebook.close();
    }
  });
});

describe("admission and limits come before a body is read", () => {
  async function withGateway(opts: Partial<ConstructorParameters<typeof Gateway>[0]>, fn: (base: string, gw: Gateway) => Promise<void>) {
    const gw = await new Gateway({
      refreshMs: 100,
      probeIntervalMs: 60_000,
      flushMs: 600_000,
      timeoutS: 5,
      idleTimeoutS: 5,
      ...opts,
    }).start();
    await gw.probeNow();
    const srv = createGatewayServer(gw, "http://127.0.0.1");
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const saved = base;
    base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    try {
      await fn(base, gw);
    } finally {
      base = saved;
      srv.closeAllConnections();
      srv.close();
      await gw.close();
    }
  }

  it("one key cannot have more requests in flight than its share, nor start more a minute than its rate; other keys are not held back", async () => {
    const other = (await makeKey({ scope: "tenant", tenant_id: world.tenant.id })).key;
    world.servers.forEach((s) => s.set({ latencyMs: 400 }));
    try {
      await withGateway({ maxConcurrencyPerKey: 2, ratePerKeyPerMinute: 0 }, async (_base, gw) => {
        const url = `/v1/endpoints/${world.ep.id}/v1/chat/completions`;
        const keyId = (await db().apiKey.findFirstOrThrow({ where: { keyHash: hashApiKey(world.key) } })).id;
        const first = [call(url, { key: world.key, body: chat("a") }), call(url, { key: world.key, body: chat("b") })];
        await until(() => gw.inFlightOf({ keyId }) === 2);
        const third = await call(url, { key: world.key, body: chat("c") });
        expect(third.status).toBe(429);
        expect(JSON.parse(third.body).error).toMatchObject({ code: "rate_limited", message: expect.stringContaining("in flight") });
        expect((await call(url, { key: other, body: chat("d") })).status).toBe(200);
        expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
        // the slots come back once the answers have streamed
        expect(gw.inFlightOf({ keyId })).toBe(0);
      });
    } finally {
      world.servers.forEach((s) => s.set({ latencyMs: 0 }));
    }
    await withGateway({ ratePerKeyPerMinute: 3 }, async () => {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await call(`/v1/endpoints/${world.ep.id}/v1/models`, { key: other })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect((await call(`/v1/endpoints/${world.ep.id}/v1/models`, { key: world.key })).status).toBe(200);
    });
  });

  it("a request the endpoint has no room for is refused before its body arrives; a long body streams through, and one past the limit stops at it", async () => {
    const seen: Array<{ bytes: number; length: string | undefined; chunked: boolean; aborted: boolean }> = [];
    const echo = http.createServer((req, res) => {
      let bytes = 0;
      const entry = {
        bytes: 0,
        length: req.headers["content-length"],
        chunked: req.headers["transfer-encoding"] === "chunked",
        aborted: false,
      };
      seen.push(entry);
      req.on("data", (c: Buffer) => (entry.bytes = bytes += c.length));
      req.on("aborted", () => (entry.aborted = true));
      req.on("end", () => res.end(JSON.stringify({ bytes })));
    });
    const { replicas } = world;
    const node = await db().node.findUniqueOrThrow({ where: { id: replicas[0]!.nodeId! } });
    await new Promise<void>((r) => echo.listen(0, node.address!, () => r()));
    const echoPort = (echo.address() as AddressInfo).port;
    const slow = world.servers.get(replicas[1]!.id)!;
    try {
      await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [replicas[0]!.id, echoPort]);
      slow.set({ healthy: false });
      await withGateway({ maxConcurrencyPerEndpoint: 1, maxBodyBytes: 4 * 1024 * 1024 }, async (gwBase, gwRef) => {
        const url = `/v1/endpoints/${world.ep.id}/upload`;
        // a body of 1 MiB streams to the replica whole, with its length, without being held first
        const big = await call(url, { key: world.key, rawBody: Buffer.alloc(1024 * 1024, 120) });
        expect(big.status).toBe(200);
        expect(JSON.parse(big.body)).toEqual({ bytes: 1024 * 1024 });
        expect(seen.at(-1)).toMatchObject({ bytes: 1024 * 1024, length: String(1024 * 1024), chunked: false });
        // one request holds the endpoint's only slot while its body trickles in…
        const { port } = new URL(gwBase);
        const hold = net.connect(Number(port), "127.0.0.1");
        hold.write(
          `POST ${url} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${world.key}\r\ncontent-length: 3000000\r\n\r\n${"y".repeat(1000)}`,
        );
        await until(() => gwRef.inFlightOf({ endpointId: world.ep.id }) === 1);
        // …so the next one is answered 429 at once, though it declared megabytes and sent almost none of them
        const refused = await new Promise<string>((resolve) => {
          const s = net.connect(Number(port), "127.0.0.1");
          let answer = "";
          s.on("data", (d) => (answer += d.toString()));
          s.on("close", () => resolve(answer));
          s.write(
            `POST ${url} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${world.key}\r\ncontent-length: 3000000\r\n\r\n${"z".repeat(10)}`,
          );
        });
        expect(refused).toMatch(/^HTTP\/1\.1 429 /);
        expect(refused).toContain("requests in flight");
        hold.destroy();
        // a streamed body without a length that grows past the limit is cut there: 413, and the replica's request ends
        await until(() => gwRef.inFlightOf({ endpointId: world.ep.id }) === 0);
        const req = http.request(`${gwBase}${url}`, { method: "POST", headers: { authorization: `Bearer ${world.key}` }, agent: false });
        const tooLong = new Promise<string>((resolve) => {
          req.on("response", (res) => {
            let b = "";
            res.on("data", (c: Buffer) => (b += c.toString()));
            res.on("end", () => resolve(`${res.statusCode} ${b}`));
          });
          req.on("error", (e) => resolve(`error ${e.message}`));
        });
        const chunk = Buffer.alloc(256 * 1024, 65);
        let sent = chunk.length;
        req.write(chunk);
        // the body streams: the replica has the request while its end is not yet sent (and the rest
        // follows only then: sent all at once, the limit was reached before the gateway had connected)
        await until(() => seen.some((e) => e.chunked));
        const pump = () => {
          while (sent < 6 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once("drain", pump);
          }
          req.end();
        };
        pump();
        expect(await tooLong).toMatch(/^413 .*payload_too_large/);
        const streamed = seen.filter((e) => e.chunked);
        expect(streamed).toHaveLength(1);
        expect(streamed[0]!.length).toBeUndefined();
        expect(streamed[0]!.bytes).toBeLessThanOrEqual(4 * 1024 * 1024);
      });
    } finally {
      slow.set({ healthy: true });
      echo.closeAllConnections();
      echo.close();
      await pool().query(`UPDATE endpoint_replicas SET host_port = $2 WHERE id = $1`, [
        replicas[0]!.id,
        world.servers.get(replicas[0]!.id)!.port,
      ]);
      await g.table.refresh();
      await g.probeNow();
    }
  });
});
