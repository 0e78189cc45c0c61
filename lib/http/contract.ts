import type { z } from "zod";
import type { PrincipalKind, TenantRole } from "@/lib/auth/principal";

// A contract is everything a client needs to know about one operation: path, method, who may
// call it, and the zod schemas of its input and output. The route wrapper enforces it and the
// OpenAPI document is generated from it, so the two cannot drift.

type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Who may call an operation: anyone, or the principal kinds listed. */
export type Access = "public" | readonly PrincipalKind[];

/** One status's reply: what it means, and its body's schema; a body other than JSON names its media type (CSV exports). */
interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  mediaType?: "text/csv";
}

type Responses = Record<number, ResponseSpec>;

export interface Contract<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  A extends Access = Access,
  R extends Responses = Responses,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. /api/tenants/{id} */
  path: string;
  summary: string;
  /** longer prose for the OpenAPI document: who may call it and what it refuses */
  description?: string;
  tags: string[];
  /** "public" or the principal kinds allowed; anything else answers 403 (401 without credentials) */
  access: A;
  /** tenant principals must also hold this role (API keys of tenant scope count as tenant_admin) */
  tenantRole?: TenantRole;
  params?: P;
  query?: Q;
  body?: B;
  /** per status: what it means and its body's schema; the route wrapper types each handler's replies from it */
  responses: R;
  /** override of the default request body limit, in bytes */
  bodyLimitBytes?: number;
  /**
   * A machine client (Prometheus, Alertmanager) may instead send this configured static token as
   * its bearer: the route wrapper compares it in constant time and tells the handler.
   */
  machineToken?: "METRICS_TOKEN" | "ALERTMANAGER_TOKEN";
  /** requests per minute per caller (per IP for anonymous callers) */
  rateLimitPerMinute?: number;
  /**
   * For an agent's per-node operations (the `{id}` parameter is its node): requests per minute per
   * caller and node. A cluster's agents may share one key, so a budget per key would shrink with
   * every node added; `rateLimitPerMinute` then bounds the key as a whole.
   */
  rateLimitPerNodePerMinute?: number;
}

export function defineContract<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, const A extends Access, R extends Responses>(
  c: Contract<P, Q, B, A, R>,
): Contract<P, Q, B, A, R> {
  return c;
}
