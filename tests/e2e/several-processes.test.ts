import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import pg from "pg";
import { freePort } from "../../scripts/lib/embedded-db";
import { startIngestServer, startNext, waitForHealthy, type ServerGroup } from "../../scripts/lib/next-server";
import { e2eServerEnv } from "../support/app-env";
import { makeCluster, makeKey, makeTenant, makeUser, unique } from "../support/fixtures";
import { E2E_METRICS_TOKEN } from "../support/operations-tokens";
import { parseExposition } from "../support/prometheus";
import { PAIR_POLICY } from "@/lib/auth/sign-in-throttle";

// Production runs several app processes and ingest servers on one database. Beside the stage's app
// (A), this suite starts a second app process (B) and an ingest server on the same database and
// checks what must hold across them: scheduled background work runs once per due time, a key
// revoked through one process is refused by the others (their caches hear the database's
// notification), sign-in throttling counts every process's failures, and rate limits, which are
// kept in each process's memory, are per process (as documented).

const servers: ServerGroup[] = [];
let appA: string;
let appB: string;
let ingest: string;
let pool: pg.Pool;

beforeAll(async () => {
  appA = inject("baseUrl");
  const env = e2eServerEnv(inject("databaseUrl"));
  const [portB, portIngest] = [await freePort(), await freePort()];
  appB = `http://127.0.0.1:${portB}`;
  ingest = `http://127.0.0.1:${portIngest}`;
  servers.push(
    startNext({ port: portB, env: { ...env, NEXTAUTH_URL: appB }, quiet: true }),
    startIngestServer({ port: portIngest, env, quiet: true }),
  );
  await Promise.all([waitForHealthy(appB), waitForHealthy(ingest)]);
  pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await pool?.end();
});

async function call(base: string, method: string, path: string, opts: { key?: string; body?: unknown; address?: string } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
      ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
      "x-forwarded-for": opts.address ?? `10.9.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function backgroundRuns(base: string, job: string): Promise<{ ok: number; skipped: number }> {
  const res = await fetch(`${base}/api/metrics`, { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` } });
  const samples = parseExposition(await res.text())
    .of("gpuforge_background_runs_total")
    .filter((s) => s.labels.job === job);
  const of = (outcome: string) => samples.filter((s) => s.labels.outcome === outcome).reduce((n, s) => n + s.value, 0);
  return { ok: of("ok"), skipped: of("skipped") };
}

describe("two app processes and an ingest server on one database", () => {
  it("run each scheduled sweep once per due time, whichever process claims it", async () => {
    // a job that waits for GPUs of a type with one free keeps every sweep's cycle logged (the sweep
    // reads the work its free GPUs could take; a type with none free is the waiting scope's)
    const cluster = await makeCluster();
    const { key: agentKey } = await makeKey({ scope: "agent", cluster_id: cluster.id });
    const gpuType = unique("MP").replace(/-/g, "").slice(0, 10).toUpperCase();
    const registered = await call(appA, "POST", "/api/clusters/nodes", {
      key: agentKey,
      body: {
        hostname: unique("mp"),
        capabilities: { containers: true },
        gpus: [0, 1].map((index) => ({ uuid: unique("GPU"), index, gpu_type: gpuType, memory_total_mb: 81_559 })),
      },
    });
    expect(registered.status).toBe(201);
    const nodeId = (registered.body as { node: { id: string } }).node.id;
    expect((await call(appA, "POST", `/api/clusters/nodes/${nodeId}/heartbeat`, { key: agentKey, body: {} })).status).toBe(200);
    const tenant = await makeTenant(4);
    const { key: tenantKey } = await makeKey({ scope: "tenant", tenant_id: tenant.id });
    const submit = async (name: string, gpus: number) => {
      const res = await call(appB, "POST", "/api/jobs", {
        key: tenantKey,
        body: { name, gpu_count: gpus, gpu_type: gpuType, duration_s: 60 },
      });
      expect(res.status).toBe(201);
      return (res.body as { job: { id: string } }).job.id;
    };
    const holds = await submit("holds", 1);
    const status = async (id: string) =>
      (await pool.query<{ status: string }>(`SELECT status FROM jobs WHERE id = $1`, [id])).rows[0]?.status;
    for (const until = Date.now() + 30_000; (await status(holds)) !== "running";) {
      if (Date.now() > until) throw new Error("the first job never started");
      await new Promise((r) => setTimeout(r, 100));
    }
    await submit("waits", 2);

    const before = await Promise.all([appA, appB].map((b) => backgroundRuns(b, "scheduler-cycle")));
    const from = new Date();
    // two or three due times of the five-second sweep (more on a loaded machine, where a tick runs late)
    const sweeps = async () =>
      (
        await pool.query<{ at: Date }>(
          `SELECT created_at AS at FROM scheduler_logs WHERE trigger = 'sweep' AND created_at > $1 ORDER BY created_at`,
          [from],
        )
      ).rows;
    await new Promise((r) => setTimeout(r, 12_000));
    for (const until = Date.now() + 30_000; (await sweeps()).length < 2 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 500));
    const rows = await sweeps();
    const after = await Promise.all([appA, appB].map((b) => backgroundRuns(b, "scheduler-cycle")));

    const perDueTime = new Map<number, number>();
    for (const r of rows) perDueTime.set(Math.floor(r.at.getTime() / 5_000), (perDueTime.get(Math.floor(r.at.getTime() / 5_000)) ?? 0) + 1);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...perDueTime.values())).toBe(1);
    // both drivers were ticking: the process that did not run a due time counted it skipped
    const skipped = after.reduce((n, x, i) => n + x.skipped - before[i]!.skipped, 0);
    expect(skipped).toBeGreaterThanOrEqual(1);
  });

  it("refuse an agent key on every process once it is revoked through one of them", async () => {
    const cluster = await makeCluster();
    const { apiKey, key } = await makeKey({ scope: "agent", cluster_id: cluster.id });
    const { key: operatorKey } = await makeKey({ scope: "operator" });
    const node = await call(appA, "POST", "/api/clusters/nodes", { key, body: { hostname: unique("rv"), gpus: [] } });
    expect(node.status).toBe(201);
    const heartbeat = (base: string) => call(base, "POST", `/api/clusters/nodes/${node.body.node.id}/heartbeat`, { key, body: {} });
    // app B and the ingest server have now checked (and may remember) the key
    for (const base of [appB, ingest]) for (let i = 0; i < 3; i++) expect((await heartbeat(base)).status).toBe(200);

    expect((await call(appA, "DELETE", `/api/api-keys/${apiKey.id}`, { key: operatorKey })).status).toBe(200);
    // the others hear the database's notification: refused well within the 30 s they may remember a key
    for (const base of [appB, ingest]) {
      let status = 200;
      for (let i = 0; i < 100 && status !== 401; i++) {
        status = (await heartbeat(base)).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status, base).toBe(401);
    }
  });

  it("count sign-in failures from every process against the same throttle", async () => {
    const tenant = await makeTenant(1);
    const user = await makeUser("tenant_admin", tenant.id);
    const address = `10.77.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    const signIn = async (base: string) => {
      const csrf = await fetch(`${base}/api/auth/csrf`, { headers: { "x-forwarded-for": address } });
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const cookie = csrf.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; ");
      const res = await fetch(`${base}/api/auth/callback/credentials`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, "x-forwarded-for": address },
        body: new URLSearchParams({ csrfToken, email: user.email, password: "not-the-password", json: "true" }),
      });
      const body = (await res.json()) as { url: string };
      return new URL(body.url).searchParams.get("error") ?? "";
    };
    // failures alternate between the processes; past the pair's free allowance every failure
    // doubles the wait, so a throttled answer comes within a few more attempts
    const answers: string[] = [];
    for (let i = 0; i < 20 && !answers.some((a) => a.startsWith("throttled")); i++) answers.push(await signIn(i % 2 === 0 ? appA : appB));
    const throttledAt = answers.findIndex((a) => a.startsWith("throttled"));
    expect(throttledAt).toBeGreaterThan(PAIR_POLICY.free);
    expect(answers.slice(0, throttledAt).every((a) => a === "invalid")).toBe(true);
    // the account's counter saw every failure that went through, from both processes
    const { rows } = await pool.query<{ failures: number }>(`SELECT failures FROM sign_in_throttles WHERE key = $1`, [
      `email:${user.email}`,
    ]);
    expect(rows[0]!.failures).toBe(throttledAt);
  });

  it("keep rate limits per process, as documented: one process's exhausted limit leaves the other's alone", async () => {
    const address = `10.88.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
    const junk = `gf_${"x".repeat(43)}`;
    let status = 401;
    for (let i = 0; i < 40 && status !== 429; i++) status = (await call(appA, "GET", "/api/jobs", { key: junk, address })).status;
    expect(status).toBe(429);
    expect((await call(appB, "GET", "/api/jobs", { key: junk, address })).status).toBe(401);
  });
});
