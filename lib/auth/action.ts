import "server-only";
import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { unstable_rethrow } from "next/navigation";
import type { z } from "zod";
import { isAppError } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { NESTING_MESSAGE, valueNestsDeeper } from "@/lib/http/json-nesting";
import { consumeAddressRateLimit, consumeRateLimit } from "@/lib/http/rate-limit";
import { refuseNul } from "@/lib/http/refuse-nul";
import { clientIp } from "@/lib/http/route";
import { logger } from "@/lib/logger";
import {
  anonymousPrincipal,
  type OperatorPrincipal,
  type Principal,
  type PublicActor,
  type TenantPrincipal,
  type TenantRole,
} from "./principal";
import { getSessionPrincipal } from "./session";

// The one wrapper for server actions: session → role → zod → use case → revalidate. It returns
// a plain state object that forms render (field errors by name, or a message), never throws.

export interface ActionState<T = unknown> {
  ok?: boolean;
  message?: string;
  fieldErrors?: Record<string, string>;
  /** what was submitted, returned on failure so the form can show it again (passwords never) */
  values?: Record<string, string>;
  data?: T;
  /** increments on every submit so forms can reset / announce */
  at?: number;
}

type SessionPrincipal = OperatorPrincipal | TenantPrincipal;

/** Who may run an action, declared as an API contract declares it: anyone, or the session kinds listed. */
export type ActionAccess = "public" | readonly SessionPrincipal["kind"][];

/** Whom the action runs for: an anonymous visitor or a signed-in caller on a public action, else one of the kinds allowed. */
type ActionActor<A extends ActionAccess> = A extends readonly (infer K)[]
  ? { principal: Extract<Principal, { kind: K }>; requestId?: string }
  : PublicActor;

interface ActionOptions<S extends z.ZodType, A extends ActionAccess> {
  schema: S;
  /** turns the submitted form into the shape the schema (shared with the API) expects */
  fromForm: (form: FormData) => unknown;
  /** "public" runs without a session (the public site's forms); otherwise the principal kinds allowed */
  access: A;
  /** tenant principals must also hold this role (operators are not asked), as in an API contract */
  tenantRole?: A extends "public" ? never : TenantRole;
  /** per-caller limit shared with the API operation of the same name: per address for public forms (every submission, valid or not), per user otherwise */
  rateLimit?: { key: string; perMinute: number };
  revalidate?: string[];
  /** open to a session that must enrol a second factor first (the enrolment actions themselves) */
  duringTwoFactorEnrolment?: boolean;
}

/** Submissions one signed-in user may make a minute through actions without a limit of their own. */
export const ACTION_PER_MINUTE = 120;

// Public actions run for an anonymous visitor (a PublicActor, which no service taking an `Actor`
// accepts); every other action runs for the signed-in principal, narrowed to the kinds it allows.
export function serverAction<S extends z.ZodType, T, const A extends ActionAccess>(
  options: ActionOptions<S, A>,
  run: (actor: ActionActor<A>, input: z.output<S>) => Promise<{ message: string; data?: T }>,
): (prev: ActionState<T>, form: FormData) => Promise<ActionState<T>> {
  return async (_prev: ActionState<T>, form: FormData): Promise<ActionState<T>> => {
    const at = Date.now();
    const principal = await getSessionPrincipal();
    const access: ActionAccess = options.access;
    const isPublic = access === "public";
    if (access !== "public") {
      if (!principal) return { ok: false, message: "Your session has ended. Sign in again.", at };
      if (!mayRun(access, options.tenantRole, principal)) return { ok: false, message: "You are not allowed to do this.", at };
      if (
        (principal.kind === "operator" || principal.kind === "tenant") &&
        principal.mustEnrolTwoFactor &&
        !options.duringTwoFactorEnrolment
      )
        return { ok: false, message: "Set up two-factor sign-in under Account first: your role requires it.", at };
    }
    // a public form counts every submission against its per-address limit, valid or not: refusals
    // cost the visitor's budget too, so nobody probes a form for free
    if (isPublic && options.rateLimit) {
      try {
        // per address (IPv6: its /64, which one subscriber holds whole)
        await consumeAddressRateLimit(options.rateLimit.key, clientIp(await headers()), options.rateLimit.perMinute);
      } catch (e) {
        if (isAppError(e) && e.code === "rate_limited")
          return { ok: false, message: "Too many requests; try again in a minute.", values: echo(form), at };
        throw e;
      }
    }
    const submitted = options.fromForm(form);
    // a form field holding JSON (a pipeline spec, say) is bounded like an API body before anything walks it
    if (valueNestsDeeper(submitted))
      return { ok: false, message: `The submission is ${NESTING_MESSAGE.toLowerCase()}.`, values: echo(form), at };
    const parsed = options.schema.safeParse(submitted);
    if (!parsed.success) {
      return {
        ok: false,
        message: "Check the highlighted fields.",
        fieldErrors: toFieldErrors(parsed.error.issues),
        values: echo(form),
        at,
      };
    }
    try {
      refuseNul(parsed.data);
      // signed-in users: per user, across actions (or the action's own limit); public forms counted above
      if (!isPublic && principal) {
        if (options.rateLimit) await consumeRateLimit(`${options.rateLimit.key}:${userKey(principal)}`, options.rateLimit.perMinute);
        else await consumeRateLimit(`action:${userKey(principal)}`, ACTION_PER_MINUTE);
      }
      // the access check above narrowed the principal to the kinds the action declares
      const actor = { principal: isPublic ? (principal ?? anonymousPrincipal) : principal! } as ActionActor<A>;
      const result = await run(actor, parsed.data);
      for (const path of options.revalidate ?? []) revalidatePath(path);
      return { ok: true, message: result.message, data: result.data, at };
    } catch (e) {
      // a use case may end in redirect() (e.g. to the list after a delete): that is navigation, not failure
      unstable_rethrow(e);
      if (isAppError(e)) {
        if (e.code === "rate_limited") return { ok: false, message: "Too many requests; try again in a minute.", values: echo(form), at };
        const fieldErrors = Object.fromEntries(e.details.map((d) => [d.path, d.message]));
        // the fields say what is wrong; the form says where to look, as for a schema's refusal
        return {
          ok: false,
          message: e.code === "validation_failed" && e.details.length ? "Check the highlighted fields." : e.message,
          fieldErrors,
          values: echo(form),
          at,
        };
      }
      logger.error("server action failed", { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      return { ok: false, message: "Something went wrong on our side. Try again.", values: echo(form), at };
    }
  };
}

/** The contract's rule (lib/http/route.ts): the kind must be listed, and a tenant must hold the role if one is named. */
function mayRun(access: Exclude<ActionAccess, "public">, tenantRole: TenantRole | undefined, p: Principal): boolean {
  if (!access.some((kind) => kind === p.kind)) return false;
  return !(p.kind === "tenant" && tenantRole && p.role !== tenantRole);
}

function userKey(p: Principal): string {
  return ("userId" in p && p.userId) || p.keyId || p.label;
}

/** React resets a form after every action; echoing the input back lets a failed form keep it. */
/**
 * Fields whose values never travel back to the browser in a refused form's state, even to their
 * own author: passwords, the notification settings' secret URLs and a pipeline secret's value.
 */
const CONCEALED = /password|secret|token|^smtp_url$|^webhook_url$|^value$|^\$/i;

function echo(form: FormData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of form.entries()) if (typeof v === "string" && !CONCEALED.test(k)) out[k] = v;
  return out;
}

function toFieldErrors(issues: z.core.$ZodIssue[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of zodIssuesToDetails(issues, "form")) out[d.path] ??= d.message;
  return out;
}

/** Form helpers: empty inputs mean "not given". */
export const formText = (f: FormData, name: string) => {
  const v = f.get(name);
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
};
export const formNumber = (f: FormData, name: string) => {
  const v = formText(f, name);
  return v === undefined ? undefined : /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;
};
export const formInt = (f: FormData, name: string) => {
  const v = formText(f, name);
  return v === undefined ? undefined : /^-?\d+$/.test(v.trim()) ? Number(v) : v;
};
