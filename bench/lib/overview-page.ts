// The operator overview (/admin) as a browser receives it: signed in as an operator over HTTP,
// the whole streamed document, timed to its last byte. What the floor costs is what this page
// sends, not what one component renders on its own.
import { gzipSync } from "node:zlib";
import type pg from "pg";
import { systemActor } from "@/lib/auth/principal";
import { createUser } from "@/lib/users/create-user";
import { harnessClient } from "../../scripts/lib/harness-clients";
import { median, round } from "./harness";

/** Signs in a new operator through next-auth's credentials flow; returns the Cookie header to send. */
export async function operatorCookie(baseUrl: string): Promise<string> {
  const email = `bench-operator-${Date.now().toString(36)}@bench.test`;
  const password = "bench-operator-password-0123";
  await createUser(systemActor, { email, name: "Bench operator", password, role: "operator" });
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  };
  keep(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const signIn = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie() },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
    redirect: "manual",
  });
  keep(signIn);
  if (![...jar.keys()].some((k) => k.endsWith("next-auth.session-token"))) throw new Error(`operator sign-in failed (${signIn.status})`);
  return cookie();
}

/**
 * Gives the cluster's nodes the mix an operator's floor shows on a normal day (varied utilization
 * per GPU, a few unhealthy GPUs, nodes offline, quarantined, in maintenance or draining, a tenant's
 * reservation, a day of utilization history) and returns a function that puts everything back, so
 * the benchmark's other phases see the fleet as registered. Deterministic: the same figures each run.
 */
export async function applyFloorMix(databaseUrl: string, clusterId: string): Promise<() => Promise<void>> {
  const c = harnessClient(databaseUrl, "overview floor mix");
  await c.connect();
  try {
    return await mix(c, clusterId);
  } catch (e) {
    await c.end();
    throw e;
  }
}

async function mix(c: pg.Client, clusterId: string): Promise<() => Promise<void>> {
  const ordered = `SELECT id, row_number() OVER (ORDER BY hostname) AS i FROM nodes WHERE cluster_id = $1`;
  // the reservation first: the database refuses to book nodes already out of service
  const tenant = await c.query<{ id: string }>(
    `INSERT INTO tenants (name, gpu_quota) VALUES ('Bench Reserved ' || $1, 2000) RETURNING id`,
    [Date.now().toString(36)],
  );
  const tenantId = tenant.rows[0]!.id;
  const reservation = await c.query<{ id: string }>(
    `INSERT INTO reservations (tenant_id, gpu_type, node_count, cluster_id, starts_at, ends_at, status, created_by)
     SELECT $1, 'H100', greatest(1, least(1024, count(*))), $2, now() - interval '1 hour', now() + interval '1 day', 'active', 'bench'
       FROM (${ordered.replace("$1", "$2")}) o WHERE o.i % 10 = 4 RETURNING id`,
    [tenantId, clusterId],
  );
  await c.query(
    `INSERT INTO reservation_nodes (reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at)
     SELECT $1, $2, o.id, 8, now() - interval '1 hour', now() + interval '1 day' FROM (${ordered.replace("$1", "$3")}) o WHERE o.i % 10 = 4`,
    [reservation.rows[0]!.id, tenantId, clusterId],
  );
  await c.query(
    `UPDATE nodes n SET status = CASE WHEN o.i % 53 = 7 THEN 'offline' WHEN o.i % 97 = 11 THEN 'quarantined'
                                      WHEN o.i % 89 = 5 THEN 'maintenance' WHEN o.i % 131 = 3 THEN 'draining' ELSE n.status END,
                   status_before_offline = CASE WHEN o.i % 53 = 7 THEN n.status END
       FROM (${ordered}) o WHERE o.id = n.id`,
    [clusterId],
  );
  await c.query(
    `UPDATE gpus g SET status = 'unhealthy', unhealthy_reason = 'XID 79 (GPU has fallen off the bus)'
       FROM (${ordered}) o WHERE o.id = g.node_id AND (o.i * 8 + g.index) % 113 = 0`,
    [clusterId],
  );
  // the last minute's rollup per GPU: most nodes run work (55–99 %), a fifth idle, the rest partly used
  await c.query(
    `INSERT INTO gpu_metrics_1m (gpu_id, bucket, samples, utilization_sum, utilization_max, memory_used_sum, memory_used_max, temperature_sum, temperature_max, power_sum, power_max)
     SELECT g.id, date_trunc('minute', now()), 1, u.util, u.util, 40000, 40000, 60, 60, 400, 400
       FROM gpus g JOIN (${ordered}) o ON o.id = g.node_id,
            LATERAL (SELECT CASE WHEN o.i % 5 = 0 THEN (g.index * 3) % 8
                                 WHEN o.i % 7 = 0 THEN CASE WHEN g.index < 4 THEN 70 + (o.i + g.index * 5) % 30 ELSE 2 END
                                 ELSE 55 + (o.i * 13 + g.index * 7) % 45 END::float8 AS util) u`,
    [clusterId],
  );
  await c.query(
    `INSERT INTO cluster_metrics_1m (cluster_id, bucket, gpus_reporting, samples, utilization_sum, temperature_max, power_sum)
     SELECT $1, b, 10000, 10000, 10000 * (55 + 20 * sin(extract(epoch FROM b) / 7200)), 78, 4000000
       FROM generate_series(date_trunc('minute', now()) - interval '24 hours', date_trunc('minute', now()) - interval '1 minute', interval '1 minute') b`,
    [clusterId],
  );
  return async () => {
    await c.query(`UPDATE reservation_nodes SET live = false, closed_at = now(), close_reason = 'bench' WHERE tenant_id = $1`, [tenantId]);
    await c.query(`UPDATE reservations SET status = 'cancelled', ended_at = now(), end_reason = 'bench' WHERE tenant_id = $1`, [tenantId]);
    await c.query(`DELETE FROM cluster_metrics_1m WHERE cluster_id = $1`, [clusterId]);
    await c.query(`DELETE FROM gpu_metrics_1m m USING gpus g, nodes n WHERE g.id = m.gpu_id AND n.id = g.node_id AND n.cluster_id = $1`, [
      clusterId,
    ]);
    await c.query(
      `UPDATE gpus g SET status = 'available', unhealthy_reason = NULL FROM nodes n WHERE n.id = g.node_id AND n.cluster_id = $1 AND g.status <> 'available'`,
      [clusterId],
    );
    // the app's reservation sweep may have begun handing the reservation's nodes back (its end is a
    // handover: lib/handover) while they were out of service: that is undone too
    await c.query(
      `UPDATE nodes SET status = 'available', status_before_offline = NULL, handover_due_since = NULL
        WHERE cluster_id = $1 AND (status <> 'available' OR handover_due_since IS NOT NULL)`,
      [clusterId],
    );
    await c.query("VACUUM ANALYZE nodes, gpus, gpu_metrics_1m");
    await c.end();
  };
}

/** GETs /admin `runs` times after a warm-up: bytes of the document (and gzipped), median time to first and last byte. */
export async function measureOverview(baseUrl: string, cookie: string, runs = 7) {
  const once = async () => {
    const t0 = performance.now();
    // identity: the HTML's own size (the server would gzip it for browsers that ask; reported apart)
    const res = await fetch(`${baseUrl}/admin`, { headers: { cookie, "accept-encoding": "identity" }, redirect: "manual" });
    if (res.status !== 200) throw new Error(`/admin answered ${res.status}`);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    let firstMs = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (chunks.length === 0) firstMs = performance.now() - t0;
      chunks.push(value);
    }
    const lastMs = performance.now() - t0;
    const body = Buffer.concat(chunks);
    return { bytes: body.byteLength, gzipBytes: gzipSync(body).byteLength, firstMs, lastMs };
  };
  await once();
  await once();
  const results: Array<Awaited<ReturnType<typeof once>>> = [];
  for (let i = 0; i < runs; i++) results.push(await once());
  return {
    bytes: median(results.map((r) => r.bytes)),
    gzip_bytes: median(results.map((r) => r.gzipBytes)),
    first_byte_ms: round(median(results.map((r) => r.firstMs))),
    last_byte_ms: round(median(results.map((r) => r.lastMs))),
  };
}
