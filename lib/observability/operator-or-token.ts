import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { forbidden, unauthorized } from "@/lib/errors";

/**
 * The door of the operations endpoints: an operator (key or session), or the contract's machine
 * token (Prometheus', Alertmanager's), which the route wrapper has already compared.
 */
export function assertOperatorOrToken(principal: Principal | null, machineToken: boolean, what: string): void {
  if (machineToken || principal?.kind === "operator") return;
  if (principal) throw forbidden(`${what} is for operators, or the configured token`);
  throw unauthorized(`Send an operator key or the configured ${what} token as 'Authorization: Bearer …'`);
}
