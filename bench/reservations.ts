// `npm run bench:reservations`: whole-node reservations at fleet scale. Prints one JSON object:
//   gpus, nodes                  10,000 GPUs on 1,250 nodes (10 pods × 100 racks), some of them
//                                quarantined or offline, a quarter of the GPUs running work with
//                                declared durations (the fleet a week in, not a fresh demo)
//   booking.*                    CLIENTS concurrent clients of 50 tenants POST /api/reservations for
//                                BENCH_RESERVATION_S seconds, 1–16 nodes for 4–12 hours starting in
//                                the next 12 (windows overlap heavily): requests and confirmed bookings
//                                per second, p50/p99 latency of each answer, the share refused
//                                (409 no_capacity), anything else (must be 0), and the double
//                                bookings the database holds afterwards (must be 0)
//   capacity.*                   a capacity query for a GPU type and a day's window over the same
//                                fleet and bookings: the query alone (p50/p99), GET /api/capacity
//                                through the app, and GET /v1/capacity through the public listener
//                                (its read-only role), sequentially and with CLIENTS in parallel
// BENCH_SMOKE=1: 100 nodes, 2 s of booking, 5 capacity samples, 1 s of parallel reads.
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { systemActor } from "@/lib/auth/principal";
import { disconnectDb, pool } from "@/lib/db/client";
import { provisionReaderLogin, readerPool } from "@/lib/public-api/reader";
import { capacityFor } from "@/lib/reservations/capacity-facts";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { createPublicApiServer } from "../scripts/public-api";
import { harnessClient } from "../scripts/lib/harness-clients";
import { percentile, round, withBenchStack } from "./lib/harness";
import { benchSize, printFigures } from "./lib/report";

const NODES = benchSize("BENCH_NODES", 1250, 100);
const TENANTS = 50;
const CLIENTS = benchSize("BENCH_CLIENTS", 16, 4);
const SECONDS = benchSize("BENCH_RESERVATION_S", 20, 2);
const CAPACITY_SAMPLES = benchSize("BENCH_CAPACITY_SAMPLES", 50, 5);
const PARALLEL_S = benchSize("BENCH_PARALLEL_S", 10, 1);
/** running work on about a quarter of the GPUs, as at 10,000 GPUs */
const BUSY_JOBS = Math.round((NODES * 400) / 1250);
const HOUR = 3_600_000;

async function seed(c: pg.Client) {
  await c.query(`INSERT INTO clusters (name, region) VALUES ('bench', 'bench-1')`);
  await c.query(`INSERT INTO tenants (name, gpu_quota) SELECT 'bench-tenant-' || i, 100000 FROM generate_series(1, $1) i`, [TENANTS]);
  await c.query(
    `INSERT INTO nodes (cluster_id, hostname, pod, rack, status, containers, last_heartbeat_at)
     SELECT (SELECT id FROM clusters WHERE name = 'bench'), 'node-' || i, 'pod-' || (i % 10), 'rack-' || (i % 100), 'available', true, now() + interval '1 day'
       FROM generate_series(1, $1) i`,
    [NODES],
  );
  await c.query(
    `INSERT INTO gpus (node_id, uuid, index, gpu_type, memory_total_mb) SELECT n.id, 'GPU-' || n.hostname || '-' || g, g, 'H100', 81559 FROM nodes n, generate_series(0, 7) g`,
  );
  // aged state: some nodes out of service, some GPUs unhealthy
  await c.query(`UPDATE nodes SET status = 'quarantined' WHERE hostname IN (SELECT 'node-' || i FROM generate_series(1, 20) i)`);
  await c.query(
    `UPDATE nodes SET status = 'offline', status_before_offline = 'available' WHERE hostname IN (SELECT 'node-' || i FROM generate_series(21, 30) i)`,
  );
  await c.query(
    `UPDATE gpus SET status = 'unhealthy', unhealthy_reason = 'bench' WHERE uuid IN (SELECT 'GPU-node-' || i || '-3' FROM generate_series(31, 60) i)`,
  );
  // running work with declared durations: a quarter of the GPUs, placed by a real cycle
  await c.query(
    `INSERT INTO jobs (tenant_id, name, gpu_count, gpu_type, priority, duration_s, status, pending_reason)
     SELECT t.id, 'busy-' || i, (ARRAY[1,2,4,8,16])[1 + i % 5], 'H100', 5, 3600 * (1 + i % 48), 'queued', 'bench'
       FROM generate_series(1, $2) i JOIN LATERAL (SELECT id FROM tenants WHERE name = 'bench-tenant-' || (1 + i % $1)) t ON true`,
    [TENANTS, BUSY_JOBS],
  );
  await c.query("ANALYZE");
}

function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  return fn().then((value) => ({ ms: performance.now() - t0, value }));
}

const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)) };
};

async function book(baseUrl: string, keys: string[], until: number) {
  const latency: number[] = [];
  const outcome = { confirmed: 0, no_capacity: 0, other: 0 };
  const others: string[] = [];
  const now = Date.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      let i = client;
      while (performance.now() < until) {
        i += CLIENTS;
        // everyone wants the next half day: windows overlap, and the fleet runs out within seconds
        const start = Math.ceil(now / HOUR) * HOUR + Math.floor(Math.random() * 12) * HOUR;
        const body = {
          gpu_type: "H100",
          node_count: 1 + Math.floor(Math.random() * 16),
          starts_at: new Date(start).toISOString(),
          ends_at: new Date(start + (4 + Math.floor(Math.random() * 9)) * HOUR).toISOString(),
        };
        const { ms, value: res } = await timed(() =>
          fetch(`${baseUrl}/api/reservations`, {
            method: "POST",
            headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          }),
        );
        const reply = (await res.json()) as { error?: { code: string; message: string } };
        latency.push(ms);
        if (res.status === 201) outcome.confirmed++;
        else if (res.status === 409 && reply.error?.code === "no_capacity") outcome.no_capacity++;
        else {
          outcome.other++;
          if (others.length < 5) others.push(`${res.status} ${JSON.stringify(reply).slice(0, 200)}`);
        }
      }
    }),
  );
  return { latency, outcome, others };
}

async function sequential(n: number, fn: () => Promise<unknown>) {
  const ms: number[] = [];
  for (let i = 0; i < n + 3; i++) {
    const t = await timed(fn);
    if (i >= 3) ms.push(t.ms); // the first few warm caches and load modules
  }
  return ms;
}

async function parallel(seconds: number, fn: () => Promise<Response>) {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        const r = await fn();
        await r.arrayBuffer();
        if (r.status === 200) done++;
        else failed++;
      }
    }),
  );
  return { per_s: round(done / seconds), failed };
}

const out = await withBenchStack(async ({ baseUrl, databaseUrl }) => {
  const c = harnessClient(databaseUrl, "bench:reservations");
  await c.connect();
  try {
    await seed(c);
    const cycle = await runSchedulerCycle("bench");
    const tenants = (await c.query<{ id: string }>(`SELECT id FROM tenants ORDER BY name`)).rows;
    const keys: string[] = [];
    for (const t of tenants) keys.push((await createApiKey(systemActor, { name: "bench", scope: "tenant", tenant_id: t.id })).key);

    // warm the route, then book under contention
    await fetch(`${baseUrl}/api/capacity?gpu_type=H100`, { headers: { authorization: `Bearer ${keys[0]}` } });
    const t0 = performance.now();
    const booked = await book(baseUrl, keys, t0 + SECONDS * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    const overlaps = await c.query(
      `SELECT count(*)::int AS n FROM reservation_nodes a JOIN reservation_nodes b ON a.node_id = b.node_id AND a.id < b.id
        WHERE a.live AND b.live AND a.starts_at < b.ends_at AND b.starts_at < a.ends_at`,
    );
    const holdings = await c.query(`SELECT count(*)::int AS n FROM reservation_nodes WHERE live`);

    // capacity at 10,000 GPUs, over the bookings just made
    const window = {
      gpu_type: "H100",
      from: new Date(Date.now() + 24 * HOUR).toISOString(),
      to: new Date(Date.now() + 48 * HOUR).toISOString(),
    };
    const query = await sequential(CAPACITY_SAMPLES, () => capacityFor(pool(), window));
    const qs = new URLSearchParams(window).toString();
    const api = await sequential(CAPACITY_SAMPLES, () =>
      fetch(`${baseUrl}/api/capacity?${qs}`, { headers: { authorization: `Bearer ${keys[0]}` } }).then((r) => r.arrayBuffer()),
    );
    const reader = readerPool(await provisionReaderLogin(databaseUrl), 10);
    const listener = createPublicApiServer(reader, { perMinute: 1_000_000 });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    const publicUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/v1/capacity?${qs}`;
    const pub = await sequential(CAPACITY_SAMPLES, () => fetch(publicUrl).then((r) => r.arrayBuffer()));
    const pubParallel = await parallel(PARALLEL_S, () => fetch(publicUrl));
    await new Promise<void>((r) => listener.close(() => r()));
    await reader.end();

    const figures = {
      gpus: NODES * 8,
      nodes: NODES,
      busy_jobs_placed: cycle.placed,
      clients: CLIENTS,
      booking: {
        seconds: round(elapsed),
        requests: booked.latency.length,
        requests_per_s: round(booked.latency.length / elapsed),
        confirmed: booked.outcome.confirmed,
        confirmed_per_s: round(booked.outcome.confirmed / elapsed),
        refused_no_capacity: booked.outcome.no_capacity,
        other_answers: booked.outcome.other,
        ...stats(booked.latency),
        live_holdings: holdings.rows[0].n,
        double_bookings: overlaps.rows[0].n,
      },
      capacity: {
        window_hours: 24,
        query: stats(query),
        api: stats(api),
        public_listener: { ...stats(pub), parallel_requests_per_s: pubParallel.per_s, parallel_failed: pubParallel.failed },
      },
    };
    return { figures, otherExamples: booked.others };
  } finally {
    await c.end();
    await disconnectDb();
  }
});

for (const example of out.otherExamples) console.error(`an answer that is neither a booking nor no_capacity: ${example}`);
printFigures(out.figures);
process.exit(out.figures.booking.other_answers === 0 && out.figures.booking.double_bookings === 0 ? 0 : 1);
