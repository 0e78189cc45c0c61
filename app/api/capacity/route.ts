import { reservations } from "@/lib/api/contracts";
import { json, route } from "@/lib/http/route";
import { getCapacity } from "@/lib/reservations/queries";

export const GET = route(reservations.getCapacity, async ({ query }) => json(200, { capacity: await getCapacity(query) }));
