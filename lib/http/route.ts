import "server-only";
import { randomUUID } from "node:crypto";
import type { NextRequest } from "next/server";
import type { z } from "zod";
import type { Actor, Principal } from "@/lib/auth/principal";
import { isSessionPrincipal, resolvePrincipal } from "@/lib/auth/resolve-principal";
import { env } from "@/lib/env";
import { forbidden, unauthorized, validationFailed } from "@/lib/errors";
import type { Contract } from "./contract";
import { errorResponse, zodIssuesToDetails } from "./error-response";
import { readJsonBody } from "./read-body";
import { consumeRateLimit } from "./rate-limit";

type Out<S> = [NonNullable<S>] extends [z.ZodType] ? z.output<NonNullable<S>> : undefined;

export interface RouteContext<C extends Contract> {
  request: NextRequest;
  principal: C["access"] extends "public" ? Principal | null : Principal;
  actor: Actor;
  requestId: string;
  params: Out<C["params"]>;
  query: Out<C["query"]>;
  body: Out<C["body"]>;
}

type NextRouteContext = { params: Promise<Record<string, string | string[]>> };

const DEFAULT_RATE_LIMIT_PER_MINUTE = 6_000;

/**
 * The one wrapper every route handler goes through: resolve the caller, enforce the contract's
 * access rule and rate limit, validate params/query/body with the contract's zod schemas (with a
 * body size limit), run the handler, and map any error to API.md's JSON error shape.
 */
export function route<C extends Contract>(contract: C, handler: (ctx: RouteContext<C>) => Promise<Response>) {
  return async (request: NextRequest, context: NextRouteContext): Promise<Response> => {
    const requestId = randomUUID();
    try {
      const principal = await authorize(contract, request);
      const rateKey = principal ? principal.keyId ?? ("userId" in principal ? principal.userId : undefined) : undefined;
      await consumeRateLimit(
        `${contract.operationId}:${rateKey ?? clientIp(request.headers)}`,
        contract.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
      );

      const params = parse(contract.params, context?.params ? await context.params : {}, "params");
      const query = parse(contract.query, Object.fromEntries(request.nextUrl.searchParams), "query");
      let body: unknown = undefined;
      if (contract.body) {
        // Browsers can only send JSON cross-site with a CORS preflight, which we never grant;
        // insisting on it for cookie-authenticated writes closes the form-post CSRF route.
        if (principal && isSessionPrincipal(principal) && !isJson(request)) {
          throw validationFailed([{ path: "content-type", message: "Content-Type must be application/json" }]);
        }
        const raw = await readJsonBody(request, contract.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES);
        body = parse(contract.body, raw, "body");
      }

      const actor: Actor = { principal: principal ?? { kind: "operator", label: "anonymous" }, requestId };
      const response = await handler({ request, principal, actor, requestId, params, query, body } as RouteContext<C>);
      response.headers.set("x-request-id", requestId);
      return response;
    } catch (e) {
      return errorResponse(e, requestId);
    }
  };
}

async function authorize(contract: Contract, request: NextRequest): Promise<Principal | null> {
  if (contract.access === "public") {
    return request.headers.has("authorization") ? resolvePrincipal(request).catch(() => null) : null;
  }
  const principal = await resolvePrincipal(request);
  if (!principal) throw unauthorized("Sign in or send 'Authorization: Bearer <api key>'");
  if (!contract.access.includes(principal.kind)) {
    throw forbidden(`This operation is not available to ${principal.kind} credentials`);
  }
  if (principal.kind === "tenant" && contract.tenantRole && principal.role !== contract.tenantRole) {
    throw forbidden("This operation requires the tenant admin role");
  }
  return principal;
}

function parse(schema: z.ZodType | undefined, value: unknown, root: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(zodIssuesToDetails(result.error.issues, root));
  return result.data;
}

function isJson(request: Request): boolean {
  return /^application\/(.+\+)?json\b/i.test(request.headers.get("content-type") ?? "");
}

/** The caller's address as the proxy in front reports it (rate limits, anonymous analytics). */
export function clientIp(headers: Headers): string {
  return headers.get("x-forwarded-for")?.split(",")[0]?.trim() || headers.get("x-real-ip") || "local";
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return Response.json(body, { status, headers });
}

/** A CSV download named after what it holds and the moment it was taken (`jobs-2026-11-30T1530Z.csv`). */
export function csvResponse(what: string, body: string): Response {
  const stamp = `${new Date().toISOString().slice(0, 16).replace(/[-:]/g, "")}Z`;
  return new Response(body, { status: 200, headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${what}-${stamp}.csv"`, "cache-control": "no-store" } });
}
