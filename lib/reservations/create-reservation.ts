import "server-only";
import { randomUUID } from "node:crypto";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, pool, txClient, type Tx } from "@/lib/db/client";
import { isRetryableBookingConflict } from "@/lib/db/sql-state";
import { run } from "@/lib/db/statement";
import { forbidden, noCapacity, unsatisfiable, validationFailed, type FieldIssue } from "@/lib/errors";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { chargeReservation, reservationTerms } from "@/lib/tenants/tenant-limits";
import { formatCents } from "@/lib/billing/money";
import { logger } from "@/lib/logger";
import { chooseReservationNodes, earliestFit, wholeFreeNodes, type CapacityFacts, type NodeRequest, type Window } from "./capacity";
import { loadCapacityFacts } from "./capacity-facts";
import { holdNodes } from "./hold-nodes";
import { getReservationOrThrow } from "./queries";
import { MAX_LEAD_S, MAX_RESERVATION_S, MIN_RESERVATION_S } from "./reservation-lifecycle";
import { recordReservationEvent } from "./record-event";
import type { CreateReservationInput } from "./schemas";
import { INSERT_RESERVATION, LOCK_BOOKING_TENANT, PEAK_RESERVED_GPUS } from "./statements";

/** Tries before a booking that keeps losing races is refused (each retry re-reads what is free). */
const ATTEMPTS = 8;
/** How far in the past a start may be (clock skew, a form submitted a moment late): it starts now. */
const PAST_TOLERANCE_MS = 5 * 60_000;

/**
 * Books whole nodes for a window, confirmed with concrete nodes at once, or refused: 409
 * no_capacity (details: what is free in the window and the earliest window that would fit), 422
 * when it can never be served (more nodes than any cluster has of the type, or more GPUs than the
 * tenant's quota). The database refuses two live holdings of one node in overlapping windows; a
 * booking that loses that race to another one re-reads what is free and tries other nodes.
 * Quota: the GPUs of a tenant's reservations count against its quota while they are active, so the
 * reservations of one tenant overlapping at any moment may not hold more GPUs than its quota.
 */
export async function createReservation(actor: Actor, input: CreateReservationInput, opts: { now?: number } = {}) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const window = bookingWindow(input, opts.now ?? Date.now());
  const req: NodeRequest = { gpuType: input.gpu_type, count: input.node_count, clusterId: input.cluster_id ?? null };

  let id: string | undefined;
  for (let attempt = 1; !id; attempt++) {
    try {
      // read what is free outside the transaction (optimistic: the database's exclusion constraint
      // and booking guard decide, and a booking that lost a node to another one reads again)
      const facts = await loadCapacityFacts(pool(), { gpuType: req.gpuType, clusterId: req.clusterId ?? undefined });
      id = await db().$transaction((tx) => book(tx, actor, tenantId, req, window, facts), { timeout: 20_000, maxWait: 20_000 });
    } catch (e) {
      if (!isRetryableBookingConflict(e)) throw e;
      logger.debug("reservation lost a booking race; retrying with fresh facts", { attempt, tenantId });
      if (attempt >= ATTEMPTS)
        throw noCapacity("The nodes free for this window were booked by others while we tried; ask again", [
          { path: "node_count", message: "Booked by others during the request" },
        ]);
    }
  }
  await emitEvent("scheduler/run.requested", { reason: "reservation booked" });
  return getReservationOrThrow(actor.principal, id);
}

function bookingWindow(input: CreateReservationInput, now: number): Window {
  const asked = Date.parse(input.starts_at);
  const to = Date.parse(input.ends_at);
  if (asked < now - PAST_TOLERANCE_MS) throw validationFailed([{ path: "starts_at", message: "Must not be in the past" }]);
  if (asked > now + MAX_LEAD_S * 1000)
    throw validationFailed([{ path: "starts_at", message: `Reservations start at most ${MAX_LEAD_S / 86_400} days ahead` }]);
  const from = Math.max(asked, now);
  if (to - from < MIN_RESERVATION_S * 1000)
    throw validationFailed([{ path: "ends_at", message: `A reservation lasts at least ${MIN_RESERVATION_S} seconds` }]);
  if (to - from > MAX_RESERVATION_S * 1000)
    throw validationFailed([{ path: "ends_at", message: `A reservation lasts at most ${MAX_RESERVATION_S / 86_400} days` }]);
  return { from, to };
}

async function book(tx: Tx, actor: Actor, tenantId: string, req: NodeRequest, window: Window, facts: CapacityFacts): Promise<string> {
  const c = txClient(tx);
  // the tenant row lock orders one tenant's bookings, so its quota check below is exact
  const [tenant] = await run(tx, LOCK_BOOKING_TENANT, [tenantId]);
  if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
  if (tenant.status !== "active") throw forbidden("Tenant is suspended");
  if (tenant.out_of_funds) throw forbidden("The prepaid balance is used up; add funds before booking");
  if (req.clusterId && !(await tx.cluster.count({ where: { id: req.clusterId } })))
    throw validationFailed([{ path: "cluster_id", message: "No such cluster" }]);

  assertServable(facts, req, tenant.gpu_quota);
  const nodes = chooseReservationNodes(facts, window, req, randomUUID());
  if (!nodes)
    throw noCapacity(`${req.count} whole ${req.gpuType} node(s) are not free for the whole window`, refusalDetails(facts, window, req));

  const gpus = nodes.reduce((s, n) => s + n.gpus, 0);
  const alreadyAtOnce = await peakReservedGpus(tx, tenantId, window);
  if (alreadyAtOnce + gpus > tenant.gpu_quota) {
    throw unsatisfiable(
      `Reserved GPUs count against the quota while active: this window already has up to ${alreadyAtOnce} reserved at once, and these ${req.count} nodes hold ${gpus}, over the quota of ${tenant.gpu_quota}`,
      [
        {
          path: "node_count",
          message: `At most ${Math.max(0, tenant.gpu_quota - alreadyAtOnce)} more GPUs may be reserved in this window`,
        },
      ],
    );
  }

  const from = new Date(window.from);
  const to = new Date(window.to);
  // the tenant's limits, and for a prepaid tenant the whole window paid now (or refused): no debt
  const seconds = (window.to - window.from) / 1000;
  const terms = await reservationTerms(tx, tenantId, { gpuType: req.gpuType, gpus, seconds, lengthS: seconds, counting: true });
  const [r] = await run(tx, INSERT_RESERVATION, [
    tenantId,
    req.gpuType,
    req.count,
    req.clusterId ?? null,
    from,
    to,
    actor.principal.label,
    terms.prepaidCents === null ? null : 0,
  ]);
  if (terms.prepaidCents !== null)
    await chargeReservation(
      tx,
      r!.id,
      tenantId,
      terms.prepaidCents,
      `Reservation of ${req.count} × ${req.gpuType} node(s), ${gpus} GPUs, ${from.toISOString()} – ${to.toISOString()}, paid up front (${formatCents(terms.prepaidCents)})`,
      actor.principal.label,
    );
  const sorted = [...nodes].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  // one holding per node, in node order (concurrent bookings lock nodes in the same order)
  await holdNodes(c, { reservationId: r!.id, tenantId, nodes: sorted, from, to });
  const topology = {
    clusters: new Set(nodes.map((n) => n.clusterId)).size,
    pods: new Set(nodes.map((n) => `${n.clusterId}/${n.pod}`)).size,
    racks: new Set(nodes.map((n) => `${n.clusterId}/${n.pod}/${n.rack}`)).size,
  };
  await recordReservationEvent(c, {
    reservationId: r!.id,
    kind: "created",
    message: `Booked ${req.count} × ${req.gpuType} node(s) (${gpus} GPUs) for ${from.toISOString()} – ${to.toISOString()}: ${topology.pods} pod(s), ${topology.racks} rack(s)`,
    actor: actor.principal.label,
    details: { node_ids: sorted.map((n) => n.nodeId), gpus, ...topology },
  });
  await recordAudit(tx, actor, {
    action: "reservation.created",
    targetType: "reservation",
    targetId: r!.id,
    tenantId,
    details: {
      gpu_type: req.gpuType,
      node_count: req.count,
      gpus,
      starts_at: from.toISOString(),
      ends_at: to.toISOString(),
      ...(terms.prepaidCents !== null ? { prepaid_cents: terms.prepaidCents } : {}),
    },
  });
  return r!.id;
}

/** 422 for a booking no window could ever serve: more nodes than any cluster has of the type, or more GPUs than the whole quota. */
function assertServable(facts: CapacityFacts, req: NodeRequest, quota: number) {
  const perCluster = new Map<string, number>();
  for (const n of facts.nodes) perCluster.set(n.clusterId, (perCluster.get(n.clusterId) ?? 0) + 1);
  const most = Math.max(0, ...perCluster.values());
  if (req.count > most) {
    const where = req.clusterId ? " in that cluster" : " in any one cluster";
    throw unsatisfiable(`The fleet has at most ${most} ${req.gpuType} node(s)${where}; a reservation's nodes are in one cluster`, [
      { path: "node_count", message: `More than the ${most} ${req.gpuType} nodes there are${where}` },
    ]);
  }
  const smallest = Math.min(...facts.nodes.map((n) => n.gpus)) * req.count;
  if (smallest > quota) {
    throw unsatisfiable(`${req.count} ${req.gpuType} node(s) hold at least ${smallest} GPUs, more than the quota of ${quota}`, [
      { path: "node_count", message: `More GPUs than the quota of ${quota}` },
    ]);
  }
}

/** What a refusal tells the caller: what is free in the window, per cluster, and the earliest window of the same length that fits. */
function refusalDetails(facts: CapacityFacts, window: Window, req: NodeRequest): FieldIssue[] {
  const free = wholeFreeNodes(facts, window, req);
  const names = new Map(facts.nodes.map((n) => [n.clusterId, n.clusterName]));
  const byCluster = new Map<string, number>();
  for (const n of free) byCluster.set(n.clusterId, (byCluster.get(n.clusterId) ?? 0) + 1);
  const where = [...byCluster].map(([id, k]) => `${k} in ${names.get(id)}`).join(", ");
  const fit = earliestFit(facts, window, req, window.from + MAX_LEAD_S * 1000);
  return [
    {
      path: "node_count",
      message: `${free.length} whole ${req.gpuType} node(s) are free for the whole window${where ? ` (${where})` : ""}; a reservation takes ${req.count} in one cluster`,
    },
    fit
      ? {
          path: "starts_at",
          message: `The earliest window of this length that fits: ${new Date(fit.from).toISOString()} to ${new Date(fit.to).toISOString()}`,
        }
      : { path: "starts_at", message: "No window of this length fits within the booking horizon with the nodes in service now" },
  ];
}

/** The most GPUs the tenant's live reservations hold at one moment of the window. */
async function peakReservedGpus(tx: Tx, tenantId: string, window: Window): Promise<number> {
  const [row] = await run(tx, PEAK_RESERVED_GPUS, [new Date(window.from), new Date(window.to), tenantId]);
  return row?.peak ?? 0;
}
