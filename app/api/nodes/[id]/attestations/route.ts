import { handover } from "@/lib/api/contracts";
import { listNodeAttestations } from "@/lib/attestation/verdict-queries";
import { route } from "@/lib/http/route";

export const GET = route(handover.listNodeAttestations, async ({ principal, params, query, reply }) => {
  const { data, nextCursor } = await listNodeAttestations(principal, params.id, query);
  return reply(200, { data, next_cursor: nextCursor });
});
