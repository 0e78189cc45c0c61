import { handover } from "@/lib/api/contracts";
import { getPolicyOrThrow } from "@/lib/attestation/policy-queries";
import { updatePolicy } from "@/lib/attestation/update-policy";
import { route } from "@/lib/http/route";

export const GET = route(handover.getPolicy, async ({ principal, params, reply }) =>
  reply(200, { policy: await getPolicyOrThrow(principal, params.id) }),
);

export const PATCH = route(handover.updatePolicy, async ({ actor, params, body, reply }) =>
  reply(200, { policy: await updatePolicy(actor, params.id, body) }),
);
