// Reads what the invariant checker looks at, in one read-only REPEATABLE READ transaction so every
// row comes from the same moment. The light read (every few seconds) takes only what must hold at
// every moment; the full read adds the history the other checks replay.
import type pg from "pg";
import type { WorldRows } from "./invariants";

const ms = (d: Date | null) => (d === null ? null : d.getTime());

export async function readWorld(pool: pg.Pool, opts: { full: boolean }): Promise<WorldRows> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const q = async <R extends pg.QueryResultRow>(sql: string) => (await c.query<R>(sql)).rows;
    const now = (await q<{ now: Date }>("SELECT now() AS now"))[0]!.now.getTime();
    const nodes = await q<{
      id: string;
      hostname: string;
      status: string;
      last_heartbeat_at: Date | null;
      attested: boolean;
      wipe_timeout_s: number;
      attestation_timeout_s: number;
      status_since: Date | null;
    }>(
      // a cluster without handover settings has their defaults (attested, 1800 s to wipe, 600 s to attest)
      `SELECT n.id, n.hostname, n.status, n.last_heartbeat_at,
              COALESCE(s.attestation, 'required') <> 'off' AS attested,
              COALESCE(s.wipe_timeout_s, 1800) AS wipe_timeout_s, COALESCE(s.attestation_timeout_s, 600) AS attestation_timeout_s,
              CASE WHEN n.status IN ('releasing', 'wiping', 'inspecting', 'attestation_failed')
                   THEN (SELECT max(e.created_at) FROM node_events e WHERE e.node_id = n.id) END AS status_since
         FROM nodes n LEFT JOIN cluster_handover_settings s ON s.cluster_id = n.cluster_id`,
    );
    const gpus = await q<{
      id: string;
      node_id: string;
      status: string;
      unhealthy_reason: string | null;
      last_xid: number | null;
      last_xid_at: Date | null;
      allocated_job_id: string | null;
      allocated_replica_id: string | null;
    }>(`SELECT id, node_id, status, unhealthy_reason, last_xid, last_xid_at, allocated_job_id, allocated_replica_id FROM gpus`);
    const tenants = await q<{ id: string; name: string; gpu_quota: number }>(`SELECT id, name, gpu_quota FROM tenants`);
    const jobs = await q<{
      id: string;
      tenant_id: string;
      status: string;
      duration_s: number | null;
      submitted_at: Date;
      pending_reason: string | null;
      block_reason: string | null;
      to_status: string | null;
      reason: string | null;
      event_at: Date | null;
    }>(
      opts.full
        ? `SELECT j.id, j.tenant_id, j.status, j.duration_s, j.submitted_at, j.pending_reason, j.block_reason, e.to_status, e.reason, e.created_at AS event_at
             FROM jobs j LEFT JOIN (SELECT DISTINCT ON (job_id) job_id, to_status, reason, created_at FROM job_events ORDER BY job_id, id DESC) e ON e.job_id = j.id`
        : `SELECT id, tenant_id, status, duration_s, submitted_at, pending_reason, block_reason, NULL AS to_status, NULL AS reason, NULL AS event_at FROM jobs WHERE status = 'running'`,
    );
    const placements = await q<{
      job_id: string;
      attempt: number;
      fence: string;
      gpu_ids: string[];
      node_ids: string[];
      started_at: Date;
      ended_at: Date | null;
      end_status: string | null;
      reservation_id: string | null;
    }>(
      `SELECT job_id, attempt, fence, gpu_ids, node_ids, started_at, ended_at, end_status, reservation_id FROM job_placements ${opts.full ? "" : "WHERE ended_at IS NULL"}`,
    );
    const replicas = await q<{
      id: string;
      tenant_id: string;
      node_id: string | null;
      status: string;
      gpu_ids: string[];
      started_at: Date;
      stopped_at: Date | null;
      reservation_id: string | null;
    }>(
      `SELECT id, tenant_id, node_id, status, gpu_ids, started_at, stopped_at, reservation_id FROM endpoint_replicas ${opts.full ? "" : "WHERE status <> 'stopped'"}`,
    );
    const holdings = await q<{
      id: string;
      reservation_id: string;
      tenant_id: string;
      node_id: string;
      gpu_count: number;
      starts_at: Date;
      ends_at: Date;
      live: boolean;
      closed_at: Date | null;
    }>(
      `SELECT id, reservation_id, tenant_id, node_id, gpu_count, starts_at, ends_at, live, closed_at FROM reservation_nodes ${opts.full ? "" : "WHERE live AND closed_at IS NULL"}`,
    );
    const world: WorldRows = {
      now,
      nodes: nodes.map((n) => ({ ...n, last_heartbeat_at: ms(n.last_heartbeat_at), status_since: ms(n.status_since) })),
      gpus: gpus.map((g) => ({ ...g, last_xid_at: ms(g.last_xid_at) })),
      tenants,
      jobs: jobs.map((j) => ({
        id: j.id,
        tenant_id: j.tenant_id,
        status: j.status,
        duration_s: j.duration_s,
        submitted_at: j.submitted_at.getTime(),
        pending_reason: j.pending_reason,
        block_reason: j.block_reason,
        last_event: j.to_status === null ? null : { to_status: j.to_status, reason: j.reason ?? "", at: j.event_at!.getTime() },
      })),
      placements: placements.map((p) => ({ ...p, started_at: p.started_at.getTime(), ended_at: ms(p.ended_at) })),
      replicas: replicas.map((r) => ({ ...r, started_at: r.started_at.getTime(), stopped_at: ms(r.stopped_at) })),
      holdings: holdings.map((h) => ({ ...h, starts_at: h.starts_at.getTime(), ends_at: h.ends_at.getTime(), closed_at: ms(h.closed_at) })),
      nodeEvents: [],
      usage: [],
      invoices: [],
      remediations: [],
      firingAlerts: [],
      hotMinutes: [],
      verdicts: [],
    };
    if (opts.full) {
      world.nodeEvents = (
        await q<{ node_id: string; from_status: string; to_status: string; created_at: Date }>(
          `SELECT node_id, from_status, to_status, created_at FROM node_events`,
        )
      ).map((e) => ({ node_id: e.node_id, from_status: e.from_status, to_status: e.to_status, at: e.created_at.getTime() }));
      world.usage = (
        await q<{
          id: string;
          job_id: string | null;
          replica_id: string | null;
          reservation_node_id: string | null;
          attempt: number;
          kind: string;
          settlement: string;
          gpu_count: number;
          started_at: Date;
          ended_at: Date;
          amount_cents: number;
          ledger_cents: number | null;
        }>(
          `SELECT u.id, u.job_id, u.replica_id, u.reservation_node_id, u.attempt, u.kind, u.settlement, u.gpu_count, u.started_at, u.ended_at, u.amount_cents::float8 AS amount_cents, l.amount_cents::float8 AS ledger_cents
             FROM usage_events u LEFT JOIN ledger_entries l ON l.usage_event_id = u.id`,
        )
      ).map((u) => ({ ...u, started_at: u.started_at.getTime(), ended_at: u.ended_at.getTime() }));
      world.invoices = await q<{ id: string; number: number; amount_cents: number; lines_cents: number; usage_cents: number }>(
        `SELECT i.id, i.number, i.amount_cents::float8 AS amount_cents,
                (SELECT COALESCE(sum(amount_cents), 0) FROM invoice_lines WHERE invoice_id = i.id)::float8 AS lines_cents,
                (SELECT COALESCE(sum(amount_cents), 0) FROM usage_events WHERE invoice_id = i.id)::float8 AS usage_cents
           FROM invoices i`,
      );
      world.remediations = (
        await q<{ node_id: string; cause: string; outcome: string; created_at: Date }>(
          `SELECT node_id, cause, outcome, created_at FROM remediations`,
        )
      ).map((r) => ({ node_id: r.node_id, cause: r.cause, outcome: r.outcome, at: r.created_at.getTime() }));
      world.firingAlerts = (
        await q<{
          id: string;
          rule_type: string;
          subject_id: string;
          node_id: string | null;
          fired_at: Date;
          window_s: number;
          occurrences: number;
        }>(
          `SELECT e.id, e.rule_type, e.subject_id, e.node_id, e.fired_at, COALESCE(r.window_s, 0) AS window_s, COALESCE(r.occurrences, 1) AS occurrences
             FROM alert_events e LEFT JOIN alert_rules r ON r.id = e.rule_id WHERE e.status = 'firing'`,
        )
      ).map((a) => ({ ...a, fired_at: a.fired_at.getTime() }));
      // the minutes each overheating GPU under a firing alert reached its rule's threshold
      world.hotMinutes = (
        await q<{ gpu_id: string; buckets: Date[] }>(
          `SELECT m.gpu_id, array_agg(m.bucket) AS buckets
             FROM alert_events e JOIN alert_rules r ON r.id = e.rule_id JOIN gpu_metrics_1m m ON m.gpu_id::text = e.subject_id AND m.temperature_max >= r.threshold
            WHERE e.status = 'firing' AND e.rule_type = 'gpu_temperature' GROUP BY m.gpu_id`,
        )
      ).map((h) => ({ gpu_id: h.gpu_id, buckets: h.buckets.map((b) => b.getTime()) }));
      world.verdicts = (
        await q<{ node_id: string; result: "pass" | "fail"; failures: string[]; created_at: Date }>(
          `SELECT node_id, result, ARRAY(SELECT DISTINCT f->>'code' FROM jsonb_array_elements(failures) f) AS failures, created_at FROM attestations`,
        )
      ).map((x) => ({ node_id: x.node_id, result: x.result, failures: x.failures, at: x.created_at.getTime() }));
    }
    await c.query("COMMIT");
    return world;
  } catch (e) {
    await c.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}
