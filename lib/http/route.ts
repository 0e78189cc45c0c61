import "server-only";
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { NextRequest } from "next/server";
import type { z } from "zod";
import { anonymousPrincipal, type Actor, type Principal, type PublicActor } from "@/lib/auth/principal";
import { isSessionPrincipal, resolvePrincipal } from "@/lib/auth/resolve-principal";
import { env, proxyTrust } from "@/lib/env";
import { forbidden, isAppError, unauthorized, validationFailed } from "@/lib/errors";
import { logger } from "@/lib/logger";
import { processMetrics, statusClass } from "@/lib/observability/process-metrics";
import { clientAddress } from "./client-address";
import type { Contract } from "./contract";
import { errorResponse, zodIssuesToDetails } from "./error-response";
import { readJsonBody } from "./read-body";
import { repliesFor, type Replies, type Reply } from "./reply";
import { refuseNul } from "./refuse-nul";
import { responseContractProblems } from "./response-contract";
import { consumeAddressRateLimit, consumeRateLimit, guardAddress, recordFailedAuth } from "./rate-limit";

type Out<S> = [NonNullable<S>] extends [z.ZodType] ? z.output<NonNullable<S>> : undefined;

export interface RouteContext<C extends Contract> extends Replies<C> {
  request: NextRequest;
  /** the caller, narrowed to the kinds the contract lets in */
  principal: C["access"] extends readonly (infer K)[] ? Extract<Principal, { kind: K }> : Principal | null;
  /** public operations may run for an anonymous visitor, whom no service taking an `Actor` accepts */
  actor: C["access"] extends "public" ? PublicActor : Actor;
  requestId: string;
  /** the bearer was the contract's configured machine token (the principal is then null) */
  machineToken: boolean;
  params: Out<C["params"]>;
  query: Out<C["query"]>;
  body: Out<C["body"]>;
}

type NextRouteContext = { params: Promise<Record<string, string | string[]>> };

const DEFAULT_RATE_LIMIT_PER_MINUTE = 6_000;

/**
 * The one wrapper every route handler goes through: resolve the caller, enforce the contract's
 * access rule and rate limit, validate params/query/body with the contract's zod schemas (with a
 * body size limit), run the handler, and map any error to API.md's JSON error shape. The handler
 * answers through its context's `reply`/`send`, typed by the contract's responses.
 */
export function route<C extends Contract>(contract: C, handler: (ctx: RouteContext<C>) => Promise<Reply>) {
  return async (request: NextRequest, context: NextRouteContext): Promise<Response> => {
    const requestId = randomUUID();
    const started = performance.now();
    const done = (response: Response) => {
      processMetrics().httpDuration.observe(
        { operation: contract.operationId, method: contract.method, status_class: statusClass(response.status) },
        (performance.now() - started) / 1000,
      );
      return response;
    };
    try {
      const address = clientIp(request.headers);
      // before anything can reach the database: addresses that keep failing to authenticate, and
      // anonymous floods, are answered here
      await guardAddress(address, hasCredentials(request));
      const machineToken = contract.machineToken ? bearerIs(request, env()[contract.machineToken]) : false;
      const principal = machineToken
        ? null
        : await authorize(contract, request).catch(async (e: unknown) => {
            if (isAppError(e) && e.code === "unauthorized") await recordFailedAuth(address);
            throw e;
          });
      // credentials a public route could not use (a junk key or cookie) earn no more than anonymity:
      // the address's anonymous budget pays, and a bad key counts as a failed authentication
      if (!principal && !machineToken && hasCredentials(request)) {
        if (request.headers.has("authorization")) await recordFailedAuth(address);
        await guardAddress(address, false);
      }
      const rateKey = principal
        ? principal.kind === "workload"
          ? principal.placement === "replica"
            ? principal.replicaId
            : `${principal.jobId}:${principal.attempt}`
          : (principal.keyId ?? ("userId" in principal ? principal.userId : undefined))
        : undefined;
      const perMinute = contract.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE;
      if (rateKey) await consumeRateLimit(`${contract.operationId}:${rateKey}`, perMinute);
      else await consumeAddressRateLimit(contract.operationId, address, perMinute);
      if (contract.rateLimitPerNodePerMinute && principal?.kind === "agent") {
        const node = ((await context?.params) ?? {}).id;
        await consumeRateLimit(`${contract.operationId}:${rateKey}:node:${String(node)}`, contract.rateLimitPerNodePerMinute);
      }
      // A session cookie rides along with any request the browser makes, including ones another
      // site starts. Writes made with one must come from this site: SameSite alone is not relied on.
      if (principal && isSessionPrincipal(principal) && request.method !== "GET" && request.method !== "HEAD") assertSameOrigin(request);

      const params = parse(contract.params, (await context?.params) ?? {}, "params");
      const query = parse(contract.query, Object.fromEntries(request.nextUrl.searchParams), "query");
      refuseNul(query, "query");
      let body: unknown = undefined;
      if (contract.body) {
        // Browsers can only send JSON cross-site with a CORS preflight, which we never grant;
        // insisting on it for cookie-authenticated writes closes the form-post CSRF route.
        if (principal && isSessionPrincipal(principal) && !isJson(request)) {
          throw validationFailed([{ path: "content-type", message: "Content-Type must be application/json" }]);
        }
        const raw = await readJsonBody(request, contract.bodyLimitBytes ?? env().API_BODY_LIMIT_BYTES);
        body = parse(contract.body, raw, "body");
        refuseNul(body, "body");
      }

      const actor: PublicActor = { principal: principal ?? anonymousPrincipal, requestId };
      const { response } = await handler({
        request,
        principal,
        actor,
        requestId,
        machineToken,
        params,
        query,
        body,
        ...repliesFor<C>(),
      } as RouteContext<C>);
      response.headers.set("x-request-id", requestId);
      if (env().VALIDATE_RESPONSES) {
        const problems = await responseContractProblems(contract, response);
        if (problems.length) {
          logger.error("a response does not match its contract", {
            operation: contract.operationId,
            status: response.status,
            problems,
            requestId,
          });
          return done(
            json(500, {
              error: {
                code: "internal_error",
                message: `The response does not match the ${contract.operationId} contract`,
                details: problems,
                request_id: requestId,
              },
            }),
          );
        }
      }
      return done(response);
    } catch (e) {
      return done(errorResponse(e, requestId));
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

/** Whether the request's bearer is the given configured token (constant time; never when none is configured). */
function bearerIs(request: Request, token: string | undefined): boolean {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  return Boolean(bearer && token && bearer.length === token.length && timingSafeEqual(Buffer.from(bearer), Buffer.from(token)));
}

function isJson(request: Request): boolean {
  return /^application\/(.+\+)?json\b/i.test(request.headers.get("content-type") ?? "");
}

/** The caller's address: the socket's, or what the configured trusted proxies vouch for (lib/http/client-address). */
export function clientIp(headers: Headers): string {
  return clientAddress(headers.get("x-forwarded-for"), proxyTrust());
}

function hasCredentials(request: NextRequest): boolean {
  return request.headers.has("authorization") || request.cookies.getAll().some((c) => c.name.includes("next-auth.session-token"));
}

/**
 * The same-origin check for cookie-authenticated writes: the browser's Sec-Fetch-Site when it sends
 * one, else its Origin, compared with the host the request was made to. A request with neither is
 * not from a browser page of ours, and a cookie is not how other clients authenticate.
 */
function assertSameOrigin(request: NextRequest): void {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) {
    if (site === "same-origin") return;
    throw forbidden("Requests from other sites cannot use your session; use an API key");
  }
  const origin = request.headers.get("origin");
  if (origin === null) throw forbidden("A write with a session cookie must come from this site (no Origin header)");
  let from: string;
  try {
    from = new URL(origin).host;
  } catch {
    throw forbidden("A write with a session cookie must come from this site");
  }
  const hosts = [
    request.headers.get("host"),
    request.headers.get("x-forwarded-host"),
    env().NEXTAUTH_URL ? new URL(env().NEXTAUTH_URL!).host : null,
  ];
  if (!hosts.includes(from)) throw forbidden("Requests from other sites cannot use your session; use an API key");
}

function json(status: number, body: unknown): Response {
  return Response.json(body, { status });
}

/** A CSV download named after what it holds and the moment it was taken (`jobs-2026-11-30T1530Z.csv`). */
export function csvResponse(what: string, body: string): Response {
  const stamp = `${new Date().toISOString().slice(0, 16).replace(/[-:]/g, "")}Z`;
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${what}-${stamp}.csv"`,
      "cache-control": "no-store",
    },
  });
}
