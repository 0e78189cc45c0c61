import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { db } from "@/lib/db/client";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { registerNode } from "@/lib/fleet/register-node";
import { submitJob } from "@/lib/jobs/submit-job";
import { assertReadOnlyRole, provisionReaderLogin, readerPool } from "@/lib/public-api/reader";
import { PUBLIC_ROUTES } from "@/lib/public-api/routes";
import { createReservation } from "@/lib/reservations/create-reservation";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createPublicApiServer } from "../../scripts/public-api";
import { randomUUID } from "node:crypto";
import type { Jwks } from "@/lib/attestation/verdict-jws";
import { verifyJws } from "@/lib/attestation/verdict-jws";
import { startHandover } from "@/lib/handover/start-handover";
import {
  actorFor,
  agentPrincipal,
  availableFleet,
  inventory,
  makeCluster,
  makeTenant,
  tenantAdminPrincipal,
  unique,
} from "../support/fixtures";
import { attestedCluster, driveHandover, FakeNodeAgent, operator } from "../support/handover-agent";

// The read-only public listener: what it serves, that it serves nothing else (405 for every method
// but GET on every path, by construction), that its database role can read the public views and
// nothing else, and that each address is rate-limited.

let reader: pg.Pool;
let server: http.Server;
let base = "";

beforeAll(async () => {
  reader = readerPool(await provisionReaderLogin(inject("databaseUrl")));
  await assertReadOnlyRole(reader);
  server = createPublicApiServer(reader, { perMinute: 10_000 });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await reader.end();
});

/** Any method, any headers, any body: node:http, since fetch refuses some methods outright. */
function send(method: string, path: string, opts: { headers?: Record<string, string>; body?: string; to?: string } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(
      `${opts.to ?? base}${path}`,
      { method, headers: { ...(opts.body ? { "content-length": String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers } },
      (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

async function world() {
  const cluster = await makeCluster();
  const gpuType = unique("P").replace(/-/g, "").slice(0, 12).toUpperCase();
  const agent = actorFor(agentPrincipal(cluster.id));
  const hostnames: string[] = [];
  for (let i = 0; i < 3; i++) {
    const hostname = unique("public-node");
    const r = await registerNode(agent, {
      hostname,
      pod: "pod-1",
      rack: `rack-${i % 2}`,
      capabilities: { containers: true },
      gpus: inventory(8, gpuType),
    });
    await recordHeartbeat(agent, r.node.id, {});
    hostnames.push(hostname);
  }
  const tenant = await makeTenant(64);
  const now = Date.now();
  await createReservation(actorFor(tenantAdminPrincipal(tenant.id)), {
    gpu_type: gpuType,
    node_count: 1,
    starts_at: new Date(now).toISOString(),
    ends_at: new Date(now + 3_600_000).toISOString(),
  });
  const other = await makeTenant(64);
  const job = await submitJob(actorFor(tenantAdminPrincipal(other.id)), {
    name: unique("secret-job-name"),
    gpu_count: 4,
    gpu_type: gpuType,
    priority: 5,
    max_retries: 0,
    duration_s: 600,
  });
  await runSchedulerCycle("public-api test");
  return { cluster, gpuType, hostnames, tenant, other, job };
}

describe("public API", () => {
  it("serves capacity, fleet status and redacted remediations, without tenant data", async () => {
    const w = await world();
    const cap = await send("GET", `/v1/capacity?gpu_type=${w.gpuType}`);
    expect(cap.status).toBe(200);
    expect(JSON.parse(cap.body).capacity).toMatchObject({ gpu_type: w.gpuType, nodes: 3, free_nodes: 1, gpus: 24, free_gpus: 12 });
    const status = await send("GET", "/v1/status");
    expect(status.status).toBe(200);
    expect(status.headers["cache-control"]).toContain("max-age");
    const cluster = JSON.parse(status.body).clusters.find((c: { cluster_id: string }) => c.cluster_id === w.cluster.id);
    expect(cluster).toMatchObject({ nodes: { available: 3 }, gpus: 24, gpus_healthy: 24, gpus_busy: 4 });
    const remediations = await send("GET", "/v1/remediations?limit=5");
    expect(remediations.status).toBe(200);
    for (const r of JSON.parse(remediations.body).data)
      expect(Object.keys(r).sort()).toEqual(["action", "at", "cause", "cluster_name", "id", "outcome", "pod"]);
    for (const body of [cap.body, status.body, remediations.body]) {
      for (const secret of [w.tenant.id, w.tenant.name, w.other.id, w.other.name, w.job.id, w.job.name, ...w.hostnames])
        expect(body).not.toContain(secret);
    }
    const doc = JSON.parse((await send("GET", "/v1/openapi.json")).body);
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/v1/attestation/keys",
      "/v1/capacity",
      "/v1/nodes/{id}/attestation",
      "/v1/openapi.json",
      "/v1/remediations",
      "/v1/status",
    ]);
    expect(Object.values(doc.paths).flatMap((ops) => Object.keys(ops as object))).toEqual(["get", "get", "get", "get", "get", "get"]);
  });

  it("serves a node's latest signed verdict and the keys to check it with, offline, without tenant data", async () => {
    const f = await availableFleet(1, 2, "PA");
    await attestedCluster(f.cluster.id);
    const n = f.nodes[0]!;
    const agent = new FakeNodeAgent(
      f.cluster.id,
      n.node.id,
      n.gpus.map((g) => g.uuid),
    );
    const tenant = await makeTenant(64);
    await startHandover(operator, n.node.id, { mode: "full", reason: `for ${tenant.name}` });
    expect(await driveHandover(agent)).toBe("available");
    const got = await send("GET", `/v1/nodes/${n.node.id}/attestation`);
    expect(got.status).toBe(200);
    const { attestation } = JSON.parse(got.body) as { attestation: { jws: string; result: string; node_id: string } };
    expect(attestation).toMatchObject({ result: "pass", node_id: n.node.id });
    const keys = JSON.parse((await send("GET", "/v1/attestation/keys")).body) as Jwks;
    expect(keys.keys.every((k) => k.kty === "OKP" && k.crv === "Ed25519" && !("d" in k))).toBe(true);
    expect(verifyJws(attestation.jws, keys)).toMatchObject({ ok: true, payload: { node_id: n.node.id, result: "pass" } });
    for (const secret of [tenant.id, tenant.name, n.node.hostname]) expect(got.body).not.toContain(secret);
    expect((await send("GET", `/v1/nodes/${randomUUID()}/attestation`)).status).toBe(404);
    expect((await send("GET", "/v1/nodes/not-a-node/attestation")).status).toBe(404);
    // nodes in their handover count as such, not as offline
    await startHandover(operator, n.node.id, { mode: "full" });
    const status = JSON.parse((await send("GET", "/v1/status")).body) as {
      clusters: Array<{ cluster_id: string; nodes: Record<string, number> }>;
    };
    expect(status.clusters.find((c) => c.cluster_id === f.cluster.id)!.nodes).toMatchObject({ releasing: 1, offline: 0, available: 0 });
  });

  it("answers 405 to every method but GET on every path, known or not, before it touches the database", async () => {
    // a reader that records every statement: a refused method must never reach one
    const statements: string[] = [];
    const spy = { query: async (sql: string, args?: unknown[]) => (statements.push(sql), reader.query(sql, args)) } as unknown as pg.Pool;
    const guarded = createPublicApiServer(spy, { perMinute: 100_000 });
    await new Promise<void>((r) => guarded.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}`;
    try {
      const paths = [
        ...PUBLIC_ROUTES.map((r) => r.contract.path),
        "/",
        "/v1/nodes/00000000-0000-4000-8000-000000000000/attestation",
        "/v1/attestation/keys",
        "/api/tenants",
        "/v1/nope",
      ];
      const methods = ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "MKCOL", "LOCK", "PURGE", "SEARCH"];
      for (const path of paths) {
        for (const method of methods) {
          const r = await send(method, path, {
            to,
            headers: { "content-type": "application/json" },
            body: method === "HEAD" || method === "TRACE" ? undefined : '{"gpu_quota": 1000}',
          });
          expect(r.status, `${method} ${path}`).toBe(405);
          expect(r.headers.allow).toBe("GET");
          if (method !== "HEAD") expect(JSON.parse(r.body).error.code).toBe("method_not_allowed");
        }
      }
      expect(statements).toEqual([]);
      expect((await send("GET", "/v1/nope", { to })).status).toBe(404);
      expect((await send("GET", "/v1/status", { to })).status).toBe(200);
      expect(statements.length).toBeGreaterThan(0);
    } finally {
      await new Promise<void>((r) => guarded.close(() => r()));
    }
  });

  it("a crafted GET writes nothing: bodies are never read, method overrides are ignored, bad input is refused", async () => {
    const witness = await makeTenant(1);
    const override = await send("GET", "/v1/status", {
      headers: { "x-http-method-override": "DELETE", "content-type": "application/json" },
      body: '{"drop": "everything"}',
    });
    expect(override.status).toBe(200);
    const injected = await send("GET", `/v1/capacity?gpu_type=${encodeURIComponent("H100'; DELETE FROM tenants; --")}`);
    expect(injected.status).toBe(400);
    expect(JSON.parse(injected.body).error).toMatchObject({ code: "validation_failed", details: [{ path: "gpu_type" }] });
    expect((await send("GET", "/v1/capacity?bogus=1")).status).toBe(400);
    expect((await send("GET", "/v1/remediations?limit=100000")).status).toBe(400);
    expect(await db().tenant.findUnique({ where: { id: witness.id } })).not.toBeNull();
  });

  it("its database role can SELECT the public views and nothing else, and can write nothing even in a read-write transaction", async () => {
    const c = await reader.connect();
    const code = (sql: string) =>
      c.query(sql).then(
        () => "ok",
        (e: { code?: string }) => e.code,
      );
    try {
      expect(await code("SELECT count(*) FROM public_api.nodes")).toBe("ok");
      for (const table of ["tenants", "api_keys", "users", "jobs", "reservations", "usage_events", "audit_log"])
        expect(await code(`SELECT 1 FROM ${table} LIMIT 1`)).toBe("42501");
      // read-only by default; and with read-write asked for, privileges refuse the write
      expect(await code("INSERT INTO clusters (name) VALUES ('x')")).toBe("25006");
      await c.query("BEGIN READ WRITE");
      expect(await code("INSERT INTO clusters (name) VALUES ('public-api-write')")).toBe("42501");
      await c.query("ROLLBACK");
      await c.query("BEGIN READ WRITE");
      expect(await code("SELECT bill_reservation_segment(gen_random_uuid(), 'final', now())")).toBe("42501");
      await c.query("ROLLBACK");
      await c.query("BEGIN READ WRITE");
      expect(await code("CREATE TABLE public_api.x (a int)")).toBe("42501");
      await c.query("ROLLBACK");
      expect(await code("SET ROLE postgres")).toBe("42501");
    } finally {
      await c.query("ROLLBACK").catch(() => {});
      c.release();
    }
    expect(await db().cluster.count({ where: { name: "public-api-write" } })).toBe(0);
  });

  it("refuses to start with a role that can do more than read the public views", async () => {
    const admin = readerPool(inject("databaseUrl"));
    await expect(assertReadOnlyRole(admin)).rejects.toThrow(/privileged/);
    await admin.end();
    // a plain role of the reader group that was also granted a table
    const url = await provisionReaderLogin(inject("databaseUrl"));
    const widened = new URL(url);
    widened.username = `gpuforge_public_wide_${Math.random().toString(36).slice(2, 8)}`;
    const su = new pg.Client({ connectionString: inject("databaseUrl") });
    await su.connect();
    try {
      await su.query(`CREATE ROLE ${widened.username} LOGIN PASSWORD '${widened.password}' IN ROLE gpuforge_public_reader`);
      await su.query(`GRANT SELECT ON tenants TO ${widened.username}`);
      const pool = readerPool(widened.toString());
      await expect(assertReadOnlyRole(pool)).rejects.toThrow(/public\.tenants/);
      await pool.end();
    } finally {
      await su.query(`REVOKE ALL ON tenants FROM ${widened.username}`).catch(() => {});
      await su.query(`DROP ROLE IF EXISTS ${widened.username}`).catch(() => {});
      await su.end();
    }
  });

  it("limits each address", async () => {
    const limited = createPublicApiServer(reader, { perMinute: 5 });
    await new Promise<void>((r) => limited.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(limited.address() as AddressInfo).port}`;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await send("GET", "/v1/openapi.json", { to })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      // a 405 costs nothing and is answered the same when limited
      expect((await send("POST", "/v1/status", { to })).status).toBe(405);
    } finally {
      await new Promise<void>((r) => limited.close(() => r()));
    }
  });
});
