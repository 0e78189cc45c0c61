import { handover } from "@/lib/api/contracts";
import { issueNonce } from "@/lib/attestation/issue-nonce";
import { route } from "@/lib/http/route";

export const POST = route(handover.issueNonce, async ({ actor, params, reply }) => reply(201, await issueNonce(actor, params.id)));
