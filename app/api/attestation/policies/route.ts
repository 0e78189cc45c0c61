import { handover } from "@/lib/api/contracts";
import { createPolicy } from "@/lib/attestation/create-policy";
import { listPolicies } from "@/lib/attestation/policy-queries";
import { route } from "@/lib/http/route";

export const GET = route(handover.listPolicies, async ({ principal, reply }) => reply(200, { data: await listPolicies(principal) }));

export const POST = route(handover.createPolicy, async ({ actor, body, reply }) => reply(201, { policy: await createPolicy(actor, body) }));
