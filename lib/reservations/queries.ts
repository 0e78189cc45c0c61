import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import { tenantScope } from "@/lib/auth/tenant-scope";
import { db, pool } from "@/lib/db/client";
import type { Prisma } from "@/lib/generated/prisma/client";
import { notFound } from "@/lib/errors";
import { run } from "@/lib/db/statement";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { topologySummary } from "@/lib/scheduler/topology";
import { oneOf } from "@/lib/vocabulary";
import { capacityFor } from "./capacity-facts";
import type { CapacityQuery, reservationEventJsonSchema, reservationJsonSchema } from "./schemas";
import { RESERVATION_EVENT_KINDS, RESERVATION_STATUSES } from "./reservation-lifecycle";
import { FLEET_BY_TENANT, GPUS_PER_NODE_BY_TYPE, WORK_IN_RESERVATION } from "./statements";

const reservationInclude = {
  nodes: {
    orderBy: [{ startsAt: "asc" as const }, { nodeId: "asc" as const }],
    select: {
      nodeId: true,
      gpuCount: true,
      startsAt: true,
      endsAt: true,
      live: true,
      closeReason: true,
      node: { select: { hostname: true, clusterId: true, pod: true, rack: true } },
    },
  },
} satisfies Prisma.ReservationInclude;

type ReservationRow = NonNullable<Awaited<ReturnType<typeof findReservation>>>;
const findReservation = (where: { id: string; tenantId?: string }) => db().reservation.findFirst({ where, include: reservationInclude });

/** A holding's state: held to the reservation's end, cut short when its node left service, or dropped before it held anything. */
function holdingState(h: ReservationRow["nodes"][number], r: { endsAt: Date }): "held" | "cut" | "dropped" {
  if (!h.live) return "dropped";
  return h.endsAt.getTime() < r.endsAt.getTime() ? "cut" : "held";
}

export function reservationJson(r: ReservationRow): z.infer<typeof reservationJsonSchema> {
  const held = r.nodes.filter((h) => holdingState(h, r) === "held");
  return {
    id: r.id,
    tenant_id: r.tenantId,
    status: oneOf(RESERVATION_STATUSES, r.status, "reservations.status"),
    degraded: r.degradedAt !== null,
    degraded_reason: r.degradedReason,
    gpu_type: r.gpuType,
    node_count: r.nodeCount,
    gpu_count: held.reduce((s, h) => s + h.gpuCount, 0),
    cluster_id: r.clusterId,
    starts_at: r.startsAt.toISOString(),
    ends_at: r.endsAt.toISOString(),
    ended_at: r.endedAt?.toISOString() ?? null,
    end_reason: r.endReason,
    node_ids: held.map((h) => h.nodeId),
    nodes: r.nodes.map((h) => ({
      node_id: h.nodeId,
      hostname: h.node.hostname,
      cluster_id: h.node.clusterId,
      pod: h.node.pod,
      rack: h.node.rack,
      gpu_count: h.gpuCount,
      starts_at: h.startsAt.toISOString(),
      ends_at: h.endsAt.toISOString(),
      state: holdingState(h, r),
    })),
    topology: topologySummary(held.map((h) => ({ nodeId: h.nodeId, clusterId: h.node.clusterId, pod: h.node.pod, rack: h.node.rack }))),
    created_at: r.createdAt.toISOString(),
  };
}

/** A reservation the caller may see: a tenant its own (another's answers 404), an operator any. */
export async function getReservationOrThrow(p: Principal, id: string) {
  const r = await findReservation({ id, ...tenantScope(p) });
  if (!r) throw notFound("Reservation");
  return r;
}

export async function listReservations(p: Principal, q: { limit: number; cursor?: string; status?: string; tenant_id?: string }) {
  const scope = tenantScope(p);
  const tenantId = scope.tenantId ?? q.tenant_id;
  const rows = await db().reservation.findMany({
    where: { ...(tenantId ? { tenantId } : {}), ...(q.status ? { status: q.status } : {}), ...afterCursor(decodeCursor(q.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
    include: reservationInclude,
  });
  return page(rows, q.limit);
}

export async function listReservationEvents(p: Principal, id: string): Promise<Array<z.infer<typeof reservationEventJsonSchema>>> {
  await getReservationOrThrow(p, id);
  const rows = await db().reservationEvent.findMany({ where: { reservationId: id }, orderBy: { id: "asc" } });
  return rows.map((e) => ({
    kind: oneOf(RESERVATION_EVENT_KINDS, e.kind, "reservation_events.kind"),
    message: e.message,
    actor: e.actor,
    node_id: e.nodeId,
    details: (e.details ?? {}) as Record<string, unknown>,
    created_at: e.createdAt.toISOString(),
  }));
}

/** GET /api/capacity: what is free for a window, per cluster, pod and rack (no tenant data). */
export const getCapacity = (q: CapacityQuery, now = Date.now()) => capacityFor(pool(), q, now);

/** Reservations overlapping a window, for the tenant calendar and the operators' timeline (a tenant sees its own). */
export async function reservationsBetween(p: Principal, from: Date, to: Date) {
  const rows = await db().reservation.findMany({
    where: { ...tenantScope(p), startsAt: { lt: to }, endsAt: { gt: from }, status: { not: "cancelled" } },
    orderBy: [{ startsAt: "asc" }, { id: "asc" }],
    take: 500,
    include: { ...reservationInclude, tenant: { select: { name: true } } },
  });
  return rows.map((r) => ({ ...reservationJson(r), tenant_name: r.tenant.name }));
}

/** The reservation a job or replica may name: the caller tenant's own, still live. */
export async function reservationsOpenTo(tenantId: string) {
  return db().reservation.findMany({
    where: { tenantId, status: { in: ["confirmed", "active"] }, endsAt: { gt: new Date() } },
    orderBy: { startsAt: "asc" },
    select: { id: true, gpuType: true, nodeCount: true, startsAt: true, endsAt: true },
  });
}

/** Every node with the tenant holding or using it now: the operators' fleet floor by tenant. */
export async function fleetByTenant() {
  const rows = await run(pool(), FLEET_BY_TENANT);
  return rows.map((r) => ({ ...r, used_by: r.used_by ?? [], booked_from: r.booked_from?.toISOString() ?? null }));
}

/** For each GPU type, the fewest and most GPUs of it one node has (present ones): what a whole node of it holds, for a booking's price. */
export async function gpusPerNodeByType(): Promise<Record<string, { min: number; max: number }>> {
  const rows = await run(pool(), GPUS_PER_NODE_BY_TYPE);
  return Object.fromEntries(rows.map((r) => [r.gpu_type, { min: r.min, max: r.max }]));
}

/** Clusters a booking may name, for the booking form. */
export async function bookableClusters() {
  return db().cluster.findMany({ where: { nodes: { some: {} } }, orderBy: { name: "asc" }, select: { id: true, name: true } });
}

/** Work running inside a reservation now, or waiting for it: what its page lists. */
export async function workInReservation(p: Principal, id: string) {
  await getReservationOrThrow(p, id);
  const rows = await run(pool(), WORK_IN_RESERVATION, [id]);
  return rows;
}
