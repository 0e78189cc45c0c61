import { handover } from "@/lib/api/contracts";
import { enrolIdentity } from "@/lib/attestation/enrol-identity";
import { getIdentity, identityJson } from "@/lib/attestation/identity-queries";
import { retireIdentity } from "@/lib/attestation/retire-identity";
import { route } from "@/lib/http/route";

export const POST = route(handover.enrolIdentity, async ({ actor, params, body, reply }) => {
  const { created, identity } = await enrolIdentity(actor, params.id, body);
  return reply(created ? 201 : 200, { identity: identityJson(identity) });
});

export const GET = route(handover.getIdentity, async ({ principal, params, reply }) => {
  const identity = await getIdentity(principal, params.id);
  return reply(200, { identity: identity ? identityJson(identity) : null });
});

export const DELETE = route(handover.retireIdentity, async ({ actor, params, send }) => {
  await retireIdentity(actor, params.id);
  return send(204);
});
