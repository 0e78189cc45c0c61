import "server-only";
import { systemActor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, txClient, type Tx } from "@/lib/db/client";
import { isRetryableBookingConflict } from "@/lib/db/sql-state";
import { logger } from "@/lib/logger";
import { pickTopology, podOf } from "@/lib/scheduler/topology";
import { wholeFreeNodes } from "./capacity";
import { loadCapacityFacts } from "./capacity-facts";
import { summary, wake, type LockedReservation } from "./end-reservation";
import { holdNodes } from "./hold-nodes";
import { recordReservationEvent } from "./record-event";
import { evictForeignWork, stopWorkInside, type MovedWork } from "./reservation-work";

const ACTOR = "reservations";
/** Node states that take a held node away from its tenant until a human returns it. */
const OUT_OF_SERVICE = ["quarantined", "maintenance"];

/**
 * The reservations sweep (every few seconds, and at once when a node leaves service): records
 * starts (moving off any work that overran onto the nodes) and ends (stopping the work inside and
 * billing each holding's last segment), and repairs reservations whose nodes left service.
 */
export async function maintainReservations() {
  const moved: MovedWork[] = [];
  const started = await eachDue(`status = 'confirmed' AND starts_at <= now() AND ends_at > now()`, async (tx, r) => {
    const work = await evictForeignWork(tx, r.id, ACTOR);
    await tx.$executeRaw`UPDATE reservations SET status = 'active', updated_at = now() WHERE id = ${r.id}::uuid`;
    await recordReservationEvent(txClient(tx), { reservationId: r.id, kind: "started", message: "Started: its nodes run only this organisation's work until its end", actor: ACTOR, details: summary(work) });
    await recordAudit(tx, systemActor, { action: "reservation.started", targetType: "reservation", targetId: r.id, tenantId: r.tenant_id, details: summary(work) });
    moved.push(work);
  });
  const completed = await eachDue(`status IN ('confirmed', 'active') AND ends_at <= now()`, async (tx, r) => {
    const work = await stopWorkInside(tx, r.id, "its reservation reached its end", ACTOR);
    await tx.$executeRaw`UPDATE reservation_nodes SET closed_at = now(), close_reason = 'completed' WHERE reservation_id = ${r.id}::uuid AND live AND closed_at IS NULL`;
    await tx.$executeRaw`
      UPDATE reservations SET status = 'completed', ended_at = now(), end_reason = 'reached its end', degraded_at = NULL, degraded_reason = NULL, updated_at = now()
       WHERE id = ${r.id}::uuid`;
    await resolveAlert(tx, r.id, "The reservation ended");
    await recordReservationEvent(txClient(tx), { reservationId: r.id, kind: "completed", message: "Reached its end; its nodes are free", actor: ACTOR, details: summary(work) });
    await recordAudit(tx, systemActor, { action: "reservation.completed", targetType: "reservation", targetId: r.id, tenantId: r.tenant_id, details: summary(work) });
    moved.push(work);
  });
  const repaired = await repairReservations();
  if (started + completed + repaired.degraded + repaired.replaced > 0) await wake(moved);
  return { started, completed, ...repaired };
}

/** Runs `step` for each reservation matching `where`, one transaction each, skipping rows another sweep holds. */
async function eachDue(where: string, step: (tx: Tx, r: LockedReservation) => Promise<void>): Promise<number> {
  const { rows } = await pool().query<{ id: string }>(`SELECT id::text FROM reservations WHERE ${where} ORDER BY starts_at LIMIT 500`);
  let done = 0;
  for (const { id } of rows) {
    const ok = await db().$transaction(async (tx) => {
      const [r] = await tx.$queryRawUnsafe<LockedReservation[]>(
        `SELECT id::text, tenant_id::text, status, starts_at, ends_at, gpu_type, node_count, degraded_at FROM reservations WHERE id = $1::uuid AND ${where} FOR UPDATE SKIP LOCKED`,
        id,
      );
      if (!r) return false;
      await step(tx, r);
      return true;
    });
    if (ok) done++;
  }
  return done;
}

/**
 * A held node that left service (quarantined, or taken into maintenance) stops being held: from now
 * if the reservation runs (its last segment is billed to now), at once if it had not started. The
 * reservation is marked degraded and its tenant alerted; then, for every reservation short of its
 * nodes, a free whole node of its type is swapped in (its own pods first, then its cluster) for the
 * rest of its window, and once whole again it is no longer degraded and the alert says so.
 */
export async function repairReservations(): Promise<{ degraded: number; replaced: number }> {
  const { rows } = await pool().query<{ id: string }>(
    `SELECT DISTINCT r.id::text FROM reservations r
      WHERE r.status IN ('confirmed', 'active') AND r.ends_at > now()
        AND (r.degraded_at IS NOT NULL OR EXISTS (
              SELECT 1 FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
               WHERE h.reservation_id = r.id AND h.live AND h.closed_at IS NULL
                 AND (n.status = ANY($1::text[]) OR n.status_before_offline = ANY($1::text[]))))`,
    [OUT_OF_SERVICE],
  );
  let degraded = 0;
  let replaced = 0;
  for (const { id } of rows) {
    try {
      const out = await db().$transaction((tx) => repairOne(tx, id), { timeout: 20_000, maxWait: 20_000 });
      degraded += out.degraded;
      replaced += out.replaced;
    } catch (e) {
      // a replacement node booked or taken by someone else a moment ago: the next pass tries others
      if (!isRetryableBookingConflict(e)) throw e;
      logger.info("reservation repair lost a race for a node; retrying next pass", { reservation: id });
    }
  }
  return { degraded, replaced };
}

async function repairOne(tx: Tx, id: string): Promise<{ degraded: number; replaced: number }> {
  const [r] = await tx.$queryRaw<Array<LockedReservation & { tenant_name: string }>>`
    SELECT r.id::text, r.tenant_id::text, r.status, r.starts_at, r.ends_at, r.gpu_type, r.node_count, r.degraded_at, t.name AS tenant_name
      FROM reservations r JOIN tenants t ON t.id = r.tenant_id
     WHERE r.id = ${id}::uuid AND r.status IN ('confirmed', 'active') AND r.ends_at > now() FOR UPDATE OF r SKIP LOCKED`;
  if (!r) return { degraded: 0, replaced: 0 };
  const c = txClient(tx);

  // 1. holdings whose node left service end now (or are dropped if they never started)
  const lost = await tx.$queryRaw<Array<{ id: string; node_id: string; hostname: string; status: string; started: boolean }>>`
    SELECT h.id::text, h.node_id::text, n.hostname, COALESCE(n.status_before_offline, n.status) AS status, h.starts_at <= now() AS started
      FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
     WHERE h.reservation_id = ${id}::uuid AND h.live AND h.closed_at IS NULL
       AND (n.status = ANY(${OUT_OF_SERVICE}::text[]) OR n.status_before_offline = ANY(${OUT_OF_SERVICE}::text[]))
     FOR UPDATE OF h`;
  for (const h of lost) {
    if (h.started) {
      await tx.$executeRaw`
        UPDATE reservation_nodes SET ends_at = GREATEST(now(), starts_at + interval '1 millisecond'), closed_at = GREATEST(now(), starts_at + interval '1 millisecond'),
               close_reason = ${`node ${h.status}`} WHERE id = ${h.id}::uuid`;
    } else {
      await tx.$executeRaw`UPDATE reservation_nodes SET live = false, closed_at = now(), close_reason = ${`node ${h.status} before the start`} WHERE id = ${h.id}::uuid`;
    }
    await recordReservationEvent(c, { reservationId: id, kind: "degraded", message: `Node ${h.hostname} left service (${h.status}); it is no longer held or billed`, actor: ACTOR, nodeId: h.node_id });
  }
  if (lost.length) {
    const reason = `${lost.length} node(s) left service (${lost.map((h) => `${h.hostname}: ${h.status}`).join(", ")})`;
    await tx.$executeRaw`UPDATE reservations SET degraded_at = COALESCE(degraded_at, now()), degraded_reason = ${reason}, updated_at = now() WHERE id = ${id}::uuid`;
    await fireAlert(tx, r, `Reservation ${id.slice(0, 8)} is degraded: ${reason}. A free ${r.gpu_type} node replaces each one as soon as there is one; the time a node is not held is not billed`);
    await recordAudit(tx, systemActor, { action: "reservation.degraded", targetType: "reservation", targetId: id, tenantId: r.tenant_id, details: { nodes: lost.map((h) => h.hostname) } });
  }

  // 2. swap in free nodes for the missing ones, for the rest of the window
  const held = await tx.$queryRaw<Array<{ node_id: string; cluster_id: string; pod: string | null; rack: string | null }>>`
    SELECT h.node_id::text, n.cluster_id::text, n.pod, n.rack FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id
     WHERE h.reservation_id = ${id}::uuid AND h.live AND h.closed_at IS NULL AND h.ends_at = ${r.ends_at}`;
  const missing = r.node_count - held.length;
  if (missing <= 0) return { degraded: lost.length ? 1 : 0, replaced: 0 };
  const [{ cluster }] = await tx.$queryRaw<[{ cluster: string | null }]>`
    SELECT COALESCE((SELECT n.cluster_id::text FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id WHERE h.reservation_id = ${id}::uuid LIMIT 1), NULL) AS cluster`;
  const from = Math.max(Date.now(), r.starts_at.getTime());
  const window = { from, to: r.ends_at.getTime() };
  const facts = await loadCapacityFacts(c, { gpuType: r.gpu_type, clusterId: cluster ?? undefined });
  const free = wholeFreeNodes(facts, window, { gpuType: r.gpu_type, clusterId: cluster });
  // its own pods first: the replacement should share the interconnect the rest of the nodes use
  const pods = new Set(held.map((h) => podOf({ nodeId: h.node_id, clusterId: h.cluster_id, pod: h.pod, rack: h.rack })));
  const samePod = free.filter((n) => pods.has(podOf(n)));
  const pick = pickTopology(samePod, missing) ?? pickTopology(free, missing, { oneCluster: true }) ?? pickTopology(free, Math.min(missing, free.length), { oneCluster: true });
  if (!pick || pick.length === 0) {
    if (!r.degraded_at && !lost.length) return { degraded: 0, replaced: 0 };
    await tx.$executeRaw`UPDATE reservations SET degraded_at = COALESCE(degraded_at, now()), degraded_reason = COALESCE(degraded_reason, ${`${missing} node(s) short`}) WHERE id = ${id}::uuid`;
    return { degraded: lost.length ? 1 : 0, replaced: 0 };
  }
  const nodes = pick.map((p) => p.node).sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  const hostnames = await tx.$queryRaw<Array<{ id: string; hostname: string }>>`SELECT id::text, hostname FROM nodes WHERE id = ANY(${nodes.map((n) => n.nodeId)}::uuid[])`;
  const hostOf = new Map(hostnames.map((h) => [h.id, h.hostname]));
  await holdNodes(c, { reservationId: id, tenantId: r.tenant_id, nodes, from: new Date(from), to: r.ends_at });
  for (const n of nodes) {
    await recordReservationEvent(c, {
      reservationId: id,
      kind: "node_replaced",
      message: `Node ${hostOf.get(n.nodeId)} joined as a replacement from ${new Date(from).toISOString()}${pods.has(podOf(n)) ? " (same pod)" : ""}`,
      actor: ACTOR,
      nodeId: n.nodeId,
    });
  }
  const whole = held.length + nodes.length >= r.node_count;
  if (whole) {
    await tx.$executeRaw`UPDATE reservations SET degraded_at = NULL, degraded_reason = NULL, updated_at = now() WHERE id = ${id}::uuid`;
    await recordReservationEvent(c, { reservationId: id, kind: "restored", message: `Whole again: ${r.node_count} node(s) held`, actor: ACTOR });
    await fireAlert(tx, r, `Reservation ${id.slice(0, 8)}: ${nodes.length} node(s) that left service were replaced (${nodes.map((n) => hostOf.get(n.nodeId)).join(", ")})`);
    await resolveAlert(tx, id, `Replaced by ${nodes.map((n) => hostOf.get(n.nodeId)).join(", ")}`);
  } else {
    await tx.$executeRaw`UPDATE reservations SET degraded_reason = ${`${r.node_count - held.length - nodes.length} node(s) short; waiting for a free ${r.gpu_type} node`}, updated_at = now() WHERE id = ${id}::uuid`;
  }
  await recordAudit(tx, systemActor, { action: "reservation.nodes_replaced", targetType: "reservation", targetId: id, tenantId: r.tenant_id, details: { nodes: nodes.map((n) => hostOf.get(n.nodeId) ?? n.nodeId), whole } });
  return { degraded: lost.length ? 1 : 0, replaced: nodes.length };
}

/** The tenant's alert about a reservation: one firing event per reservation, its message kept current. */
async function fireAlert(tx: Tx, r: LockedReservation, message: string) {
  await tx.$executeRaw`
    INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, tenant_id, severity, message, details)
    VALUES ('reservation_degraded', ${`reservation_degraded:${r.id}`}, 'reservation', ${r.id}, ${`${r.node_count} × ${r.gpu_type} reservation`}, ${r.tenant_id}::uuid, 'warning', ${message}, '{}'::jsonb)
    ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), message = EXCLUDED.message`;
}

async function resolveAlert(tx: Tx, id: string, note: string) {
  await tx.$executeRaw`
    UPDATE alert_events SET status = 'resolved', resolved_at = now(), message = message || ${`. ${note}.`}
     WHERE dedupe_key = ${`reservation_degraded:${id}`} AND status = 'firing'`;
}
