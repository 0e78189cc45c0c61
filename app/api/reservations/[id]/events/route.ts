import { reservations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { listReservationEvents } from "@/lib/reservations/queries";

export const GET = route(reservations.listReservationEvents, async ({ principal, params, reply }) =>
  reply(200, { data: await listReservationEvents(principal, params.id) }),
);
