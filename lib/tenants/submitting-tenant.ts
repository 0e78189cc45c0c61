import type { Actor } from "@/lib/auth/principal";
import { forbidden, validationFailed } from "@/lib/errors";

/** The tenant a caller submits work for: its own, or (operators) the one it names. */
export function submittingTenant(actor: Actor, tenantIdInBody: string | undefined): string {
  const p = actor.principal;
  if (p.kind === "tenant") {
    if (tenantIdInBody && tenantIdInBody !== p.tenantId) throw forbidden("Work can only be submitted for your own tenant");
    return p.tenantId;
  }
  if (p.kind === "operator") {
    if (!tenantIdInBody) throw validationFailed([{ path: "tenant_id", message: "Required with an operator key" }]);
    return tenantIdInBody;
  }
  throw forbidden("Agents do not submit work");
}
