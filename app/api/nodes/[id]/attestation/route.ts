import { handover } from "@/lib/api/contracts";
import { submitAttestation } from "@/lib/attestation/submit-attestation";
import { attestationJson } from "@/lib/attestation/verdict-queries";
import { route } from "@/lib/http/route";

export const POST = route(handover.submitAttestation, async ({ actor, params, body, reply }) =>
  reply(201, { attestation: attestationJson(await submitAttestation(actor, params.id, body)) }),
);
