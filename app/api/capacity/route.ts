import { reservations } from "@/lib/api/contracts";
import { route } from "@/lib/http/route";
import { getCapacity } from "@/lib/reservations/queries";

export const GET = route(reservations.getCapacity, async ({ query, reply }) => reply(200, { capacity: await getCapacity(query) }));
