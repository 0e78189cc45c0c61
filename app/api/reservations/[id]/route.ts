import { reservations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { endReservation } from "@/lib/reservations/end-reservation";
import { extendReservation } from "@/lib/reservations/extend-reservation";
import { getReservationOrThrow, reservationJson } from "@/lib/reservations/queries";

export const GET = route(reservations.getReservation, async ({ principal, params, reply }) =>
  reply(200, { reservation: reservationJson(await getReservationOrThrow(principal, params.id)) }),
);

export const PATCH = route(reservations.extendReservation, async ({ actor, params, body, reply }) =>
  reply(200, { reservation: reservationJson(await extendReservation(actor, params.id, body)) }),
);

export const DELETE = route(reservations.endReservation, async ({ actor, params, reply }) =>
  reply(200, { reservation: reservationJson(await endReservation(actor, params.id)) }),
);
