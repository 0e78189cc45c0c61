import { z } from "zod";
import { defineContract } from "@/lib/http/contract";
import { errorBodySchema } from "@/lib/http/error-response";
import {
  capacityJsonSchema,
  capacityQuery,
  createReservationBody,
  extendReservationBody,
  listReservationsQuery,
  reservationEventJsonSchema,
  reservationJsonSchema,
} from "@/lib/reservations/schemas";
import { authErrors, idParams, listOf, notFoundError } from "./common";

const reservationReply = z.object({ reservation: reservationJsonSchema });
const noCapacityError = {
  409: {
    description:
      "The window cannot be served (no_capacity): details say what is free and the earliest window that fits; or not allowed in its current state (invalid_transition)",
    schema: errorBodySchema,
  },
} as const;
const impossibleError = {
  422: {
    description: "It can never be served: more nodes than a cluster has of the type, or more GPUs than the quota (unsatisfiable)",
    schema: errorBodySchema,
  },
} as const;

export const createReservation = defineContract({
  operationId: "createReservation",
  method: "POST",
  path: "/api/reservations",
  summary: "Book whole nodes of a GPU type for a window: confirmed with concrete nodes, or refused",
  description:
    "The nodes are in one cluster: one pod when possible, then the fewest racks, best fit. Reserved GPUs count against the quota while active; the reservation is billed per second for its whole window, used or not. Tenant admins and tenant keys.",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  body: createReservationBody,
  rateLimitPerMinute: 600,
  responses: { 201: { description: "Confirmed", schema: reservationReply }, ...authErrors, ...noCapacityError, ...impossibleError },
});

export const listReservations = defineContract({
  operationId: "listReservations",
  method: "GET",
  path: "/api/reservations",
  summary: "List reservations (a tenant sees its own), newest first",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  query: listReservationsQuery,
  responses: { 200: { description: "Reservations", schema: listOf(reservationJsonSchema) }, ...authErrors },
});

export const getReservation = defineContract({
  operationId: "getReservation",
  method: "GET",
  path: "/api/reservations/{id}",
  summary: "A reservation with its nodes and their topology",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: { 200: { description: "The reservation", schema: reservationReply }, ...authErrors, ...notFoundError },
});

export const extendReservation = defineContract({
  operationId: "extendReservation",
  method: "PATCH",
  path: "/api/reservations/{id}",
  summary: "Extend a reservation's end when its nodes are free for the extra time",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  body: extendReservationBody,
  responses: {
    200: { description: "Extended", schema: reservationReply },
    ...authErrors,
    ...notFoundError,
    ...noCapacityError,
    ...impossibleError,
  },
});

export const endReservation = defineContract({
  operationId: "endReservation",
  method: "DELETE",
  path: "/api/reservations/{id}",
  summary: "Cancel a reservation before its start, or release it early",
  description:
    "Work inside it stops: jobs that named it are cancelled, other work of the tenant goes back to the queue. Billing stops at the release; a cancellation bills nothing.",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  tenantRole: "tenant_admin",
  params: idParams,
  responses: {
    200: { description: "Cancelled or released", schema: reservationReply },
    ...authErrors,
    ...notFoundError,
    409: { description: "Already ended (invalid_transition)", schema: errorBodySchema },
  },
});

export const listReservationEvents = defineContract({
  operationId: "listReservationEvents",
  method: "GET",
  path: "/api/reservations/{id}/events",
  summary: "Every change of a reservation, with who and why",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  params: idParams,
  responses: {
    200: { description: "Events, oldest first", schema: z.object({ data: z.array(reservationEventJsonSchema) }) },
    ...authErrors,
    ...notFoundError,
  },
});

export const getCapacity = defineContract({
  operationId: "getCapacity",
  method: "GET",
  path: "/api/capacity",
  summary: "Free whole nodes and GPUs per cluster, pod and rack for a window",
  description:
    "Takes reservations, running work with declared durations (work without one blocks every window) and unhealthy hardware into account.",
  tags: ["Reservations"],
  access: ["operator", "tenant"],
  query: capacityQuery,
  responses: { 200: { description: "Capacity", schema: z.object({ capacity: capacityJsonSchema }) }, ...authErrors },
});
