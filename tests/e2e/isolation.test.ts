import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { api, expectErrorShape } from "../support/http";
import { registerNode } from "@/lib/fleet/register-node";
import { agentPrincipal, makeKey, unique } from "../support/fixtures";
import { ACTORS, buildWorld, operationCases, type World } from "./world";
import { callerAuditCount } from "../support/caller-audit";

// Walks every operation of the API as six kinds of caller and checks each answer. Driven by the
// server's own OpenAPI document; a route file that the document does not describe, or an
// operation without an expectation here, fails the walk.

type Doc = { paths: Record<string, Record<string, { operationId: string }>> };

// Routes that speak someone else's protocol, with their own authentication, outside our contract.
const FOREIGN_ROUTES = new Set(["/api/auth/{...nextauth}", "/api/inngest"]);

function routeFiles(dir = "app/api", prefix = "/api"): Array<{ path: string; methods: string[] }> {
  const out: Array<{ path: string; methods: string[] }> = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      const seg = entry.replace(/^\[(.+)\]$/, "{$1}");
      out.push(...routeFiles(full, `${prefix}/${seg}`));
    } else if (entry === "route.ts") {
      const src = readFileSync(full, "utf8");
      const methods = [...src.matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b/g)].map((m) => m[1]!);
      out.push({ path: prefix, methods });
    }
  }
  return out;
}

let doc: Doc;
let world: World;

beforeAll(async () => {
  doc = (await api("GET", "/api/openapi.json")).body;
  world = await buildWorld();
});

describe("API isolation", () => {
  it("every route file is described by the OpenAPI document, and nothing else is", () => {
    const files = routeFiles().filter((r) => !FOREIGN_ROUTES.has(r.path));
    const fromFiles = files.flatMap((r) => r.methods.map((m) => `${m} ${r.path}`)).sort();
    const fromDoc = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(fromFiles).toEqual(fromDoc);
  });

  it("every operation in the document has an expectation for every kind of caller", () => {
    const cases = operationCases(world);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    expect(ids.filter((id) => !cases[id]).map((id) => `no isolation expectation for ${id}`)).toEqual([]);
    expect(
      Object.keys(cases)
        .filter((id) => !ids.includes(id))
        .map((id) => `stale expectation ${id}`),
    ).toEqual([]);
  });

  it("answers each caller as expected on every operation, and refused calls write nothing", async () => {
    const cases = operationCases(world);
    const failures: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const c = cases[op.operationId];
        if (!c) continue;
        for (const actor of ACTORS) {
          const target = await c.path();
          const auditBefore = await callerAuditCount();
          const reply = await api(method.toUpperCase(), target, { key: world.keys[actor], body: c.body?.() });
          const want = c.expect[actor];
          if (reply.status !== want) {
            failures.push(
              `${op.operationId} (${method.toUpperCase()} ${p}) as ${actor}: got ${reply.status}, want ${want} ${JSON.stringify(reply.body).slice(0, 160)}`,
            );
            continue;
          }
          if (want >= 400) {
            try {
              expectErrorShape(
                reply,
                { 400: "validation_failed", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict" }[
                  want as 400 | 401 | 403 | 404 | 409
                ],
              );
            } catch (e) {
              failures.push(`${op.operationId} as ${actor}: ${(e as Error).message}`);
            }
            if (method !== "get" && (await callerAuditCount()) !== auditBefore) {
              failures.push(`${op.operationId} as ${actor}: refused with ${want} but something was written`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("a tenant's lists never contain another tenant's objects", async () => {
    const asB = world.keys.other_tenant;
    const tenants = (await api("GET", "/api/tenants", { key: asB })).body.data as Array<{ id: string }>;
    expect(tenants.map((t) => t.id)).toEqual([world.b.id]);
    const keys = (await api("GET", "/api/api-keys?include_revoked=true", { key: asB })).body.data as Array<{ tenant_id: string }>;
    expect(keys.every((k) => k.tenant_id === world.b.id)).toBe(true);
    const users = (await api("GET", "/api/users", { key: asB })).body.data as Array<{ tenant_id: string }>;
    expect(users.every((u) => u.tenant_id === world.b.id)).toBe(true);
    const reservations = (await api("GET", "/api/reservations?limit=500", { key: asB })).body.data as Array<{ tenant_id: string }>;
    expect(reservations.every((r) => r.tenant_id === world.b.id)).toBe(true);
    expect(
      (await api("GET", "/api/reservations?limit=500", { key: world.keys.own_tenant })).body.data.some(
        (r: { id: string }) => r.id === world.reservationOfA,
      ),
    ).toBe(true);
    const audit = (await api("GET", "/api/audit-log?limit=500", { key: asB })).body.data as Array<{ tenant_id: string }>;
    expect(audit.every((e) => e.tenant_id === world.b.id)).toBe(true);
    const clusters = (await api("GET", "/api/clusters", { key: world.keys.agent })).body.data as Array<{ id: string }>;
    expect(clusters.map((c) => c.id)).toEqual([world.clusterC.id]);
    expect((await api("GET", `/api/clusters/${world.clusterC.id}`, { key: world.keys.agent })).status).toBe(200);
    const nodes = (await api("GET", "/api/nodes?limit=500", { key: world.keys.agent })).body.data as Array<{ cluster_id: string }>;
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n) => n.cluster_id === world.clusterC.id)).toBe(true);
    const gpus = (await api("GET", "/api/gpus?limit=500", { key: world.keys.agent })).body.data as Array<{ node_id: string }>;
    expect(gpus.every((g) => g.node_id === world.nodeC.node.id)).toBe(true);
  });

  it("pods: a node's agent reports only on pods its nodes ran, fenced; another tenant cannot see or touch them; anonymous callers get 401", async () => {
    const agent = world.keys.agent;
    const onD = world.podOnD;
    // a compromised node of cluster C, holding a real fence of a pod on cluster D, still learns nothing and changes nothing
    for (const [path, body] of [
      [`/api/pods/${onD.id}/status`, { attempt: onD.attempt, fence: onD.fence, status: "exited", exit_code: 1 }],
      [`/api/pods/${onD.id}/logs`, { attempt: onD.attempt, fence: onD.fence, chunks: [{ seq: 1, stream: "stdout", text: "forged\n" }] }],
    ] as const) {
      const r = await api("POST", path, { key: agent, body });
      expect(r.status, path).toBe(404);
      expectErrorShape(r, "not_found");
    }
    expect((await db().pod.findUniqueOrThrow({ where: { id: onD.id }, select: { status: true } })).status).toBe("starting");
    expect(await db().workloadLog.count({ where: { podId: onD.id } })).toBe(0);
    // its own pod, with a made-up fence or attempt: a stale report, nothing changed
    const stale = await api("POST", `/api/pods/${world.podOnC.id}/status`, {
      key: agent,
      body: { attempt: world.podOnC.attempt + 1, fence: world.podOnC.fence, status: "exited" },
    });
    expect(stale.status).toBe(409);
    expect((await db().pod.findUniqueOrThrow({ where: { id: world.podOnC.id }, select: { status: true } })).status).not.toBe("failed");
    // tenant B: A's pod does not exist for it, whatever it tries
    const asB = world.keys.other_tenant;
    for (const [method, path] of [
      ["GET", `/api/pods/${world.podOnC.id}`],
      ["POST", `/api/pods/${world.podOnC.id}/stop`],
      ["DELETE", `/api/pods/${world.podOnC.id}`],
      ["GET", `/api/pods/${world.podOnC.id}/logs`],
    ] as const) {
      const r = await api(method, path, { key: asB });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    expect((await db().pod.findUniqueOrThrow({ where: { id: world.podOnC.id }, select: { status: true } })).status).not.toMatch(
      /stopp|terminated/,
    );
    const listed = (await api("GET", "/api/pods?limit=200", { key: asB })).body.data as Array<{ tenant_id: string }>;
    expect(listed.every((x) => x.tenant_id === world.b.id)).toBe(true);
    for (const path of ["/api/pods", `/api/pods/${world.podOnC.id}`]) expect((await api("GET", path)).status).toBe(401);
  });

  it("Slurm: one Slurm cluster's bridge key cannot report for another cluster, its nodes or its jobs, and changes nothing there", async () => {
    const operator = world.keys.operator;
    const other = await api("POST", "/api/clusters", { key: operator, body: { name: unique("walk-slurm-t"), kind: "slurm" } });
    expect(other.status).toBe(201);
    const bridgeT = (await makeKey({ scope: "agent", cluster_id: other.body.cluster.id })).key;
    const s = world.clusterS.id;
    const job = world.jobOnS;
    const nodeS = world.nodeS.node.id;
    const auditBefore = await callerAuditCount();
    for (const [method, path, body] of [
      [
        "PUT",
        `/api/clusters/${s}/slurm`,
        {
          bridge_id: "44444444-4444-4444-8444-444444444444",
          slurm_cluster_name: "forged",
          slurm_version: "24.05.3",
          container_mode: "none",
          partitions: [],
        },
      ],
      ["GET", `/api/clusters/${s}/slurm`, undefined],
      // a real fence of the other cluster's placement still changes nothing
      [
        "POST",
        `/api/jobs/${job.id}/slurm`,
        { attempt: job.attempt, fence: job.fence, state: "COMPLETED", slurm_job_id: "9999", exit_code: "0:0" },
      ],
      ["GET", `/api/jobs/${job.id}/slurm`, undefined],
      [
        "POST",
        `/api/jobs/${job.id}/logs`,
        { attempt: job.attempt, fence: job.fence, chunks: [{ seq: 1, stream: "stdout", text: "forged\n" }] },
      ],
      ["POST", `/api/clusters/nodes/${nodeS}/heartbeat`, { slurm: { state: "DOWN", partitions: ["gpu"], reason: "forged" } }],
    ] as const) {
      const r = await api(method, path, { key: bridgeT, body });
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(404);
      expectErrorShape(r, "not_found");
    }
    expect(await callerAuditCount()).toBe(auditBefore);
    const picture = (await api("GET", `/api/clusters/${s}/slurm`, { key: operator })).body.slurm;
    expect(picture).toMatchObject({ slurm_cluster_name: "walk", bridge: { id: world.slurmBridgeId } });
    expect((await db().job.findUniqueOrThrow({ where: { id: job.id }, select: { status: true } })).status).toBe("running");
    const tracked = await db().slurmJob.findUniqueOrThrow({ where: { jobId_attempt: { jobId: job.id, attempt: job.attempt } } });
    expect(tracked.slurmJobId).not.toBe("9999");
    expect(tracked.state).not.toBe("COMPLETED");
    expect((await db().slurmNode.findUniqueOrThrow({ where: { nodeId: nodeS } })).state).toBe("IDLE");
    expect((await db().node.findUniqueOrThrow({ where: { id: nodeS } })).status).not.toBe("offline");
    expect(await db().workloadLog.count({ where: { jobId: job.id } })).toBe(0);
  });

  it("attestation: only the node's own agent takes its nonce, enrols its key, sends its evidence and its wipe report; nobody else learns the node exists", async () => {
    // node D is cluster D's: cluster C's agent key gets 404 on every evidence route, and nothing is stored
    const d = world.nodeD.node.id;
    const at = new Date().toISOString();
    for (const [route, body] of [
      [`/api/nodes/${d}/attestation/nonce`, undefined],
      [`/api/nodes/${d}/attestation/identity`, { ...world.attestation.identity, tpm_kind: "simulated" }],
      [`/api/nodes/${d}/attestation`, world.attestation.evidence],
      [`/api/nodes/${d}/wipe`, { devices: [{ device: "GPU-x", method: "nvidia-smi -r", started_at: at, finished_at: at, result: "ok" }] }],
    ] as const) {
      const r = await api("POST", route, { key: world.keys.agent, body });
      expect(r.status, route).toBe(404);
      expectErrorShape(r, "not_found");
    }
    expect(await db().attestationNonce.count({ where: { nodeId: d } })).toBe(0);
    expect(await db().attestationIdentity.count({ where: { nodeId: d } })).toBe(0);
    expect(await db().attestation.count({ where: { nodeId: d } })).toBe(0);
    // a key bound to one node of cluster C cannot speak for another node of the same cluster
    const bound = await makeKey({ scope: "agent", cluster_id: world.clusterC.id, node_id: world.nodeC.node.id });
    const sibling = await registerNode({ principal: agentPrincipal(world.clusterC.id) }, { hostname: unique("sibling"), gpus: [] });
    for (const route of [`/api/nodes/${sibling.node.id}/attestation/nonce`, `/api/nodes/${sibling.node.id}/attestation`]) {
      const r = await api("POST", route, { key: bound.key, body: route.endsWith("nonce") ? undefined : world.attestation.evidence });
      expect(r.status, route).toBe(404);
    }
    // its own node: a nonce, and evidence judged (a nonce never issued fails, as a verdict)
    const own = await api("POST", `/api/nodes/${world.nodeC.node.id}/attestation/nonce`, { key: bound.key });
    expect(own.status).toBe(201);
    expect(own.body.nonce).toMatch(/^[0-9a-f]{64}$/);
    const verdict = await api("POST", `/api/nodes/${world.nodeC.node.id}/attestation`, {
      key: bound.key,
      body: world.attestation.evidence,
    });
    expect(verdict.status).toBe(201);
    expect(verdict.body.attestation.result).toBe("fail");
    expect(verdict.body.attestation.failures.map((f: { code: string }) => f.code)).toContain("nonce.value.unknown");
    // a tenant reads the verdicts of a node only if it received the node
    expect((await api("GET", `/api/nodes/${world.nodeC.node.id}/attestations`, { key: world.keys.own_tenant })).status).toBe(404);
    // anonymous callers: the key set, nothing else
    expect((await api("GET", "/api/attestation/keys")).status).toBe(200);
    for (const route of [`/api/nodes/${world.nodeC.node.id}/attestation/nonce`, `/api/nodes/${world.nodeC.node.id}/attestation`])
      expect((await api("POST", route, { body: world.attestation.evidence })).status).toBe(401);
  });

  it("a revoked key stops working at once, and the response says unauthorized", async () => {
    const created = await api("POST", "/api/api-keys", { key: world.keys.own_tenant, body: { name: "short-lived", scope: "tenant" } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^gf_/);
    expect(created.body.api_key.prefix).toBe(created.body.key.slice(0, 12));
    expect((await api("GET", "/api/users", { key: created.body.key })).status).toBe(200);
    expect((await api("DELETE", `/api/api-keys/${created.body.api_key.id}`, { key: world.keys.own_tenant })).status).toBe(200);
    const after = await api("GET", "/api/users", { key: created.body.key });
    expect(after.status).toBe(401);
    expectErrorShape(after, "unauthorized");
  });

  it("registration without a valid agent key never returns or changes anything", async () => {
    const body = { hostname: world.nodeC.node.hostname, rack: "hijacked", gpus: [] };
    for (const key of [undefined, world.keys.revoked, "gf_" + "x".repeat(43)]) {
      const r = await api("POST", "/api/clusters/nodes", { key, body });
      expect(r.status).toBe(401);
      expect(JSON.stringify(r.body)).not.toContain(world.nodeC.node.id);
    }
    const node = await db().node.findUniqueOrThrow({ where: { id: world.nodeC.node.id } });
    expect(node.rack).not.toBe("hijacked");
    expect(await db().gpu.count({ where: { nodeId: node.id, status: "missing" } })).toBe(0);
  });

  it("a cluster's shared agent key cannot move another node's address (gateway traffic and SSH go there)", async () => {
    const before = await db().node.findUniqueOrThrow({ where: { id: world.nodeC.node.id }, select: { address: true } });
    const r = await api("POST", "/api/clusters/nodes", {
      key: world.keys.agent,
      body: { hostname: world.nodeC.node.hostname, address: "127.66.66.66", gpus: [] },
    });
    expect(r.status).toBe(409);
    expectErrorShape(r, "conflict");
    expect(r.body.error.details).toEqual([expect.objectContaining({ path: "address" })]);
    const after = await db().node.findUniqueOrThrow({ where: { id: world.nodeC.node.id }, select: { address: true } });
    expect(after.address).toBe(before.address);
    expect(await db().auditLog.count({ where: { targetId: world.nodeC.node.id, action: "node.address_changed" } })).toBe(0);
  });

  it("answers garbage credentials with 401, never 500", async () => {
    for (const header of ["Bearer", "Bearer gf_nope", "Basic dXNlcjpwYXNz", "Bearer " + "x".repeat(5000), "gf_raw"]) {
      const r = await api("GET", "/api/tenants", { headers: { authorization: header } });
      expect(r.status, header.slice(0, 20)).toBe(401);
    }
  });
});
