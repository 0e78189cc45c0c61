import { z } from "zod";
import { paginationQuery } from "@/lib/http/pagination";
import { RESERVATION_EVENT_KINDS, RESERVATION_STATUSES } from "./reservation-lifecycle";

const gpuTypeField = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9._-]+$/, "Letters, digits, dot, dash, underscore");
const instant = z.iso.datetime({ offset: true, message: "An ISO-8601 time with a zone, such as 2026-12-01T09:00:00Z" });

export const createReservationBody = z
  .strictObject({
    tenant_id: z.uuid("Must be a tenant id").optional(),
    gpu_type: gpuTypeField,
    node_count: z.number().int().min(1).max(1024),
    starts_at: instant,
    ends_at: instant,
    cluster_id: z.uuid("Must be a cluster id").optional(),
  })
  .refine((b) => Date.parse(b.ends_at) > Date.parse(b.starts_at), { path: ["ends_at"], message: "Must be after starts_at" })
  .meta({
    id: "CreateReservation",
    example: { gpu_type: "H100", node_count: 4, starts_at: "2026-12-07T08:00:00Z", ends_at: "2026-12-14T08:00:00Z" },
  });

export const extendReservationBody = z
  .strictObject({ ends_at: instant.meta({ description: "The new end: later than the current one" }) })
  .meta({ id: "ExtendReservation", example: { ends_at: "2026-12-21T08:00:00Z" } });

export const listReservationsQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(RESERVATION_STATUSES).optional(),
  tenant_id: z.uuid().optional(),
});

export const capacityQuery = z
  .strictObject({
    gpu_type: gpuTypeField.optional(),
    cluster_id: z.uuid("Must be a cluster id").optional(),
    from: instant.optional().meta({ description: "Window start (default: now)" }),
    to: instant.optional().meta({ description: "Window end (default: an hour after from)" }),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.to) > Date.parse(q.from), { path: ["to"], message: "Must be after from" });

export type CreateReservationInput = z.output<typeof createReservationBody>;
export type CapacityQuery = z.output<typeof capacityQuery>;

const figures = {
  nodes: z.number(),
  nodes_in_service: z.number(),
  nodes_in_handover: z.number().meta({ description: "Nodes between tenants (being released, wiped, inspected) or being provisioned" }),
  free_nodes: z.number(),
  gpus: z.number(),
  free_gpus: z.number(),
};
export const capacityJsonSchema = z
  .object({
    gpu_type: z.string().nullable(),
    from: z.string(),
    to: z.string(),
    ...figures,
    gpu_types: z.array(z.object({ gpu_type: z.string(), free_nodes: z.number(), free_gpus: z.number(), gpus: z.number() })),
    clusters: z.array(
      z.object({
        cluster_id: z.string(),
        cluster_name: z.string(),
        region: z.string().nullable(),
        ...figures,
        pods: z.array(
          z.object({ pod: z.string().nullable(), ...figures, racks: z.array(z.object({ rack: z.string().nullable(), ...figures })) }),
        ),
      }),
    ),
  })
  .meta({ id: "Capacity", description: "Free whole nodes and GPUs for the window, per cluster, pod and rack" });

const topologyJsonSchema = z
  .object({ clusters: z.number(), pods: z.number(), racks: z.number(), nodes: z.number() })
  .meta({ id: "Topology" });

export const reservationJsonSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    status: z.enum(RESERVATION_STATUSES),
    degraded: z.boolean(),
    degraded_reason: z.string().nullable(),
    gpu_type: z.string(),
    node_count: z.number(),
    gpu_count: z.number().meta({ description: "GPUs of the nodes it holds now (what counts against the quota while active)" }),
    cluster_id: z.string().nullable().meta({ description: "The cluster asked for, if any" }),
    starts_at: z.string(),
    ends_at: z.string(),
    ended_at: z.string().nullable(),
    end_reason: z.string().nullable(),
    node_ids: z.array(z.string()).meta({ description: "The nodes it holds (to its end)" }),
    nodes: z.array(
      z.object({
        node_id: z.string(),
        hostname: z.string(),
        cluster_id: z.string(),
        pod: z.string().nullable(),
        rack: z.string().nullable(),
        gpu_count: z.number(),
        starts_at: z.string(),
        ends_at: z.string(),
        state: z
          .enum(["held", "cut", "dropped"])
          .meta({ description: "held: to the end; cut: left service and was replaced; dropped: swapped out before it held anything" }),
      }),
    ),
    topology: topologyJsonSchema,
    created_at: z.string(),
  })
  .meta({ id: "Reservation" });

export const reservationEventJsonSchema = z.object({
  kind: z.enum(RESERVATION_EVENT_KINDS),
  message: z.string(),
  actor: z.string(),
  node_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
