import { reservations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { createReservation } from "@/lib/reservations/create-reservation";
import { listReservations, reservationJson } from "@/lib/reservations/queries";

export const POST = route(reservations.createReservation, async ({ actor, body, reply }) =>
  reply(201, { reservation: reservationJson(await createReservation(actor, body)) }),
);

export const GET = route(reservations.listReservations, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listReservations(principal, query);
  return reply(200, { data: data.map(reservationJson), next_cursor: nextCursor });
});
