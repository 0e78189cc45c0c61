import "server-only";
import { getToken } from "next-auth/jwt";
import type { NextRequest } from "next/server";
import { authenticateApiKey } from "@/lib/api-keys/authenticate-api-key";
import { authenticateReplicaToken } from "@/lib/endpoints/authenticate-replica-token";
import { looksLikeReplicaToken } from "@/lib/endpoints/replica-token";
import { authenticateJobToken, looksLikeJobToken } from "@/lib/jobs/job-token";
import { authSecret } from "@/lib/env";
import { forbidden, unauthorized } from "@/lib/errors";
import { principalForUserId } from "@/lib/users/principal-for-user";
import type { Principal } from "./principal";

// A caller another layer already authenticated (the ingest server checks keys before it reads a
// body): the route wrapper takes its word instead of asking the database a second time.
const authenticated = new WeakMap<Request, Principal>();

export function attachPrincipal(request: Request, principal: Principal): void {
  authenticated.set(request, principal);
}

/**
 * One function decides who a request comes from: a Bearer API key (or a serving or job container's
 * placement-scoped token), or else the next-auth session
 * cookie. A session is re-checked against the database on every API call, so a disabled user or
 * a suspended tenant loses access at once rather than when the token expires.
 */
export async function resolvePrincipal(request: NextRequest): Promise<Principal | null> {
  const known = authenticated.get(request);
  if (known) return known;
  const authorization = request.headers.get("authorization");
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw unauthorized("Authorization header must be 'Bearer <key>'");
    // a serving or job container's placement-scoped token, or an API key
    const token = match[1]!;
    if (looksLikeReplicaToken(token)) return authenticateReplicaToken(token);
    if (looksLikeJobToken(token)) return authenticateJobToken(token);
    return authenticateApiKey(token);
  }
  const token = await getToken({ req: request, secret: authSecret() });
  if (!token?.sub) return null;
  const principal = await principalForUserId(token.sub, typeof token.sv === "number" ? token.sv : 0);
  if (!principal) throw unauthorized("Session is no longer valid; sign in again");
  if ((principal.kind === "operator" || principal.kind === "tenant") && principal.mustEnrolTwoFactor)
    throw forbidden("Your role must sign in with a second factor: set it up under Account first");
  return principal;
}

export function isSessionPrincipal(p: Principal): boolean {
  return "userId" in p && Boolean(p.userId) && !p.keyId;
}
