import "server-only";
import { timingSafeEqual } from "node:crypto";
import type { Principal } from "@/lib/auth/principal";
import { forbidden, unauthorized } from "@/lib/errors";

/**
 * The door of the operations endpoints: an operator (key or session), or the static bearer token
 * the configuration names for a machine client (Prometheus, Alertmanager), compared in constant time.
 */
export function assertOperatorOrToken(principal: Principal | null, authorization: string | null, token: string | undefined, what: string): void {
  if (principal?.kind === "operator") return;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (bearer && token && bearer.length === token.length && timingSafeEqual(Buffer.from(bearer), Buffer.from(token))) return;
  if (principal) throw forbidden(`${what} is for operators, or the configured token`);
  throw unauthorized(`Send an operator key or the configured ${what} token as 'Authorization: Bearer …'`);
}
