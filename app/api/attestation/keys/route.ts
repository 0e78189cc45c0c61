import { handover } from "@/lib/api/contracts";
import { verdictJwks } from "@/lib/attestation/signing-key";
import { db } from "@/lib/db/client";
import { route } from "@/lib/http/route";

export const GET = route(handover.attestationKeys, async ({ reply }) =>
  reply(200, await verdictJwks(db()), { "cache-control": "public, max-age=300" }),
);
