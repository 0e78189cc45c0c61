import { forbidden } from "@/lib/errors";

// Who is calling. Every request (API key or browser session) resolves to exactly one of these,
// and tenant-plane code takes it as an argument so tenant scoping is part of every signature.

export type TenantRole = "tenant_admin" | "tenant_member";
export type PrincipalKind = "operator" | "tenant" | "agent" | "workload";

interface Via {
  userId?: string;
  keyId?: string;
  /** what to show in audit entries: an email or a key prefix */
  label: string;
  /** a browser session whose role must sign in with a second factor and has none yet: only enrolment is open to it */
  mustEnrolTwoFactor?: boolean;
}

/** `system`: the platform acting on its own (a sweep, a webhook, monthly invoicing), audited as such. */
export type OperatorPrincipal = { kind: "operator"; system?: true } & Via;
export type TenantPrincipal = { kind: "tenant"; tenantId: string; role: TenantRole } & Via;
/** A node agent's key: one cluster's nodes, or (a node-bound key) one node of it. */
export type AgentPrincipal = { kind: "agent"; clusterId: string; nodeId?: string; keyId: string; label: string };
/**
 * A workload on a node, holding a credential scoped to its own placement: a serving container's
 * report token (its own replica's samples and nothing else) or a job container's (its own
 * placement's outputs and nothing else).
 */
export type WorkloadPrincipal =
  | { kind: "workload"; placement: "replica"; replicaId: string; endpointId: string; tenantId: string; keyId?: undefined; label: string }
  | {
      kind: "workload";
      placement: "job";
      jobId: string;
      attempt: number;
      fence: string;
      tenantId: string;
      keyId?: undefined;
      label: string;
    };
export type Principal = OperatorPrincipal | TenantPrincipal | AgentPrincipal | WorkloadPrincipal;
/**
 * A caller without credentials (the public site's forms and routes). A kind of its own, outside
 * `Principal`, so no function that takes a principal or an `Actor` (every operator-only path among
 * them) can be handed one: the compiler refuses it.
 */
export type AnonymousPrincipal = { kind: "anonymous"; label: "anonymous" };
export const anonymousPrincipal: AnonymousPrincipal = { kind: "anonymous", label: "anonymous" };

/** A caller plus the request it came with: what services need to act and to audit. */
export interface Actor {
  principal: Principal;
  requestId?: string;
}

/** Who runs a public operation: a signed-in caller or an anonymous visitor. */
export interface PublicActor {
  principal: Principal | AnonymousPrincipal;
  requestId?: string;
}

/** The platform acting on its own, named for the audit log ("stripe webhook", "monthly invoicing"). */
export function systemActorFor(label: string): Actor {
  return { principal: { kind: "operator", system: true, label } };
}

export const systemActor: Actor = systemActorFor("system");

export function assertOperator(p: Principal): asserts p is OperatorPrincipal {
  if (p.kind !== "operator") throw forbidden("Operator access required");
}

export function assertTenantAdminOrOperator(p: Principal): asserts p is OperatorPrincipal | TenantPrincipal {
  if (p.kind === "operator") return;
  if (p.kind === "tenant" && p.role === "tenant_admin") return;
  throw forbidden(p.kind === "tenant" ? "Tenant admin role required" : "Not available to agent keys");
}
