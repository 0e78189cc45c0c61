import "server-only";
import { systemActor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db, pool, txClient, type Tx } from "@/lib/db/client";
import { isRetryableBookingConflict } from "@/lib/db/sql-state";
import { run, runOne } from "@/lib/db/statement";
import { logger } from "@/lib/logger";
import { pickTopology, podOf } from "@/lib/scheduler/topology";
import { returnUnusedPrepayment } from "@/lib/tenants/tenant-limits";
import { wholeFreeNodes } from "./capacity";
import { loadCapacityFacts } from "./capacity-facts";
import { lockedReservation, summary, wake, type LockedReservation } from "./end-reservation";
import { holdNodes } from "./hold-nodes";
import { startHandoversAfterTenancy } from "@/lib/handover/start-handover";
import { TENANCY_NODES_OF_RESERVATION } from "@/lib/handover/statements";
import { MARK_HANDOVER_DUE } from "@/lib/fleet/workflow-statements";
import { recordReservationEvent } from "./record-event";
import { evictForeignWork, stopWorkInside, type MovedWork } from "./reservation-work";
import {
  CLOSE_COMPLETED_HOLDINGS,
  COMPLETE_RESERVATION,
  DROP_LOST_HOLDING,
  DUE_TO_END_IDS,
  DUE_TO_START_IDS,
  END_LOST_HOLDING,
  FIRE_RESERVATION_ALERT,
  HELD_NODES,
  LOCK_DUE_TO_END,
  LOCK_DUE_TO_START,
  LOCK_RESERVATION_TO_REPAIR,
  LOST_HOLDINGS,
  MARK_DEGRADED,
  MARK_SHORT,
  MARK_WHOLE,
  NODE_HOSTNAMES,
  RESERVATION_CLUSTER,
  RESERVATIONS_TO_REPAIR,
  RESOLVE_RESERVATION_ALERT,
  SET_DEGRADED_REASON,
  START_RESERVATION,
} from "./upkeep-statements";

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
  const started = await eachDue(DUE_TO_START_IDS, LOCK_DUE_TO_START, async (tx, r) => {
    const work = await evictForeignWork(tx, r.id, ACTOR);
    await run(tx, START_RESERVATION, [r.id]);
    await recordReservationEvent(txClient(tx), {
      reservationId: r.id,
      kind: "started",
      message: "Started: its nodes run only this organisation's work until its end",
      actor: ACTOR,
      details: summary(work),
    });
    await recordAudit(tx, systemActor, {
      action: "reservation.started",
      targetType: "reservation",
      targetId: r.id,
      tenantId: r.tenant_id,
      details: summary(work),
    });
    moved.push(work);
  });
  const completed = await eachDue(DUE_TO_END_IDS, LOCK_DUE_TO_END, async (tx, r) => {
    const work = await stopWorkInside(tx, r.id, "its reservation reached its end", ACTOR);
    await run(tx, CLOSE_COMPLETED_HOLDINGS, [r.id]);
    await run(tx, COMPLETE_RESERVATION, [r.id]);
    // the tenant has left its nodes: each is wiped and inspected before anyone else gets it
    const nodes = await run(tx, TENANCY_NODES_OF_RESERVATION, [r.id]);
    work.handovers = await startHandoversAfterTenancy(tx, nodes, `reservation ${r.id.slice(0, 8)} reached its end`, ACTOR);
    // a reservation paid up front gives back what its segments did not draw
    const returned = await returnUnusedPrepayment(tx, r.id, ACTOR);
    await resolveAlert(tx, r.id, "The reservation ended");
    await recordReservationEvent(txClient(tx), {
      reservationId: r.id,
      kind: "completed",
      message: "Reached its end; its nodes are free",
      actor: ACTOR,
      details: summary(work),
    });
    await recordAudit(tx, systemActor, {
      action: "reservation.completed",
      targetType: "reservation",
      targetId: r.id,
      tenantId: r.tenant_id,
      details: { ...summary(work), ...(returned ? { returned_cents: returned } : {}) },
    });
    moved.push(work);
  });
  const repaired = await repairReservations();
  if (started + completed + repaired.degraded + repaired.replaced > 0) await wake(moved);
  return { started, completed, ...repaired };
}

/** Runs `step` for each reservation `due` lists and `lock` still finds due, one transaction each, skipping rows another sweep holds. */
async function eachDue(
  due: typeof DUE_TO_START_IDS,
  lock: typeof LOCK_DUE_TO_START,
  step: (tx: Tx, r: LockedReservation) => Promise<void>,
): Promise<number> {
  const rows = await run(pool(), due);
  let done = 0;
  for (const { id } of rows) {
    const ok = await db().$transaction(async (tx) => {
      const [r] = await run(tx, lock, [id]);
      if (!r) return false;
      await step(tx, lockedReservation(r));
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
async function repairReservations(): Promise<{ degraded: number; replaced: number }> {
  const rows = await run(pool(), RESERVATIONS_TO_REPAIR, [OUT_OF_SERVICE]);
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
  const [row] = await run(tx, LOCK_RESERVATION_TO_REPAIR, [id]);
  if (!row) return { degraded: 0, replaced: 0 };
  const r = lockedReservation(row);
  const c = txClient(tx);

  // 1. holdings whose node left service end now (or are dropped if they never started)
  const lost = await run(tx, LOST_HOLDINGS, [id, OUT_OF_SERVICE]);
  for (const h of lost) {
    if (h.started) {
      await run(tx, END_LOST_HOLDING, [`node ${h.status}`, h.id]);
      // the tenant had the node: it returns to service only through a handover
      await run(tx, MARK_HANDOVER_DUE, [h.node_id]);
    } else {
      await run(tx, DROP_LOST_HOLDING, [`node ${h.status} before the start`, h.id]);
    }
    await recordReservationEvent(c, {
      reservationId: id,
      kind: "degraded",
      message: `Node ${h.hostname} left service (${h.status}); it is no longer held or billed`,
      actor: ACTOR,
      nodeId: h.node_id,
    });
  }
  if (lost.length) {
    const reason = `${lost.length} node(s) left service (${lost.map((h) => `${h.hostname}: ${h.status}`).join(", ")})`;
    await run(tx, MARK_DEGRADED, [reason, id]);
    await fireAlert(
      tx,
      r,
      `Reservation ${id.slice(0, 8)} is degraded: ${reason}. A free ${r.gpu_type} node replaces each one as soon as there is one; the time a node is not held is not billed`,
    );
    await recordAudit(tx, systemActor, {
      action: "reservation.degraded",
      targetType: "reservation",
      targetId: id,
      tenantId: r.tenant_id,
      details: { nodes: lost.map((h) => h.hostname) },
    });
  }

  // 2. swap in free nodes for the missing ones, for the rest of the window
  const held = await run(tx, HELD_NODES, [id, r.ends_at]);
  const missing = r.node_count - held.length;
  if (missing <= 0) return { degraded: lost.length ? 1 : 0, replaced: 0 };
  const { cluster } = (await runOne(tx, RESERVATION_CLUSTER, [id]))!;
  const from = Math.max(Date.now(), r.starts_at.getTime());
  const window = { from, to: r.ends_at.getTime() };
  const facts = await loadCapacityFacts(c, { gpuType: r.gpu_type, clusterId: cluster ?? undefined });
  const free = wholeFreeNodes(facts, window, { gpuType: r.gpu_type, clusterId: cluster });
  // its own pods first: the replacement should share the interconnect the rest of the nodes use
  const pods = new Set(held.map((h) => podOf({ nodeId: h.node_id, clusterId: h.cluster_id, pod: h.pod, rack: h.rack })));
  const samePod = free.filter((n) => pods.has(podOf(n)));
  const pick =
    pickTopology(samePod, missing) ??
    pickTopology(free, missing, { oneCluster: true }) ??
    pickTopology(free, Math.min(missing, free.length), { oneCluster: true });
  if (!pick || pick.length === 0) {
    if (!r.degraded_at && !lost.length) return { degraded: 0, replaced: 0 };
    await run(tx, MARK_SHORT, [`${missing} node(s) short`, id]);
    return { degraded: lost.length ? 1 : 0, replaced: 0 };
  }
  const nodes = pick.map((p) => p.node).sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  const hostnames = await run(tx, NODE_HOSTNAMES, [nodes.map((n) => n.nodeId)]);
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
    await run(tx, MARK_WHOLE, [id]);
    await recordReservationEvent(c, {
      reservationId: id,
      kind: "restored",
      message: `Whole again: ${r.node_count} node(s) held`,
      actor: ACTOR,
    });
    await fireAlert(
      tx,
      r,
      `Reservation ${id.slice(0, 8)}: ${nodes.length} node(s) that left service were replaced (${nodes.map((n) => hostOf.get(n.nodeId)).join(", ")})`,
    );
    await resolveAlert(tx, id, `Replaced by ${nodes.map((n) => hostOf.get(n.nodeId)).join(", ")}`);
  } else {
    await run(tx, SET_DEGRADED_REASON, [
      `${r.node_count - held.length - nodes.length} node(s) short; waiting for a free ${r.gpu_type} node`,
      id,
    ]);
  }
  await recordAudit(tx, systemActor, {
    action: "reservation.nodes_replaced",
    targetType: "reservation",
    targetId: id,
    tenantId: r.tenant_id,
    details: { nodes: nodes.map((n) => hostOf.get(n.nodeId) ?? n.nodeId), whole },
  });
  return { degraded: lost.length ? 1 : 0, replaced: nodes.length };
}

/** The tenant's alert about a reservation: one firing event per reservation, its message kept current. */
async function fireAlert(tx: Tx, r: LockedReservation, message: string) {
  await run(tx, FIRE_RESERVATION_ALERT, [
    `reservation_degraded:${r.id}`,
    r.id,
    `${r.node_count} × ${r.gpu_type} reservation`,
    r.tenant_id,
    message,
  ]);
}

async function resolveAlert(tx: Tx, id: string, note: string) {
  await run(tx, RESOLVE_RESERVATION_ALERT, [`. ${note}.`, `reservation_degraded:${id}`]);
}
