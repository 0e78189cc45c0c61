import "server-only";
import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { unstable_rethrow } from "next/navigation";
import type { z } from "zod";
import { isAppError } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { consumeRateLimit } from "@/lib/http/rate-limit";
import { refuseNul } from "@/lib/http/refuse-nul";
import { clientIp } from "@/lib/http/route";
import { logger } from "@/lib/logger";
import { anonymousPrincipal, type Actor, type Principal, type PublicActor } from "./principal";
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

interface ActionOptions<S extends z.ZodType> {
  schema: S;
  /** turns the submitted form into the shape the schema (shared with the API) expects */
  fromForm: (form: FormData) => unknown;
  /** who may run it; "public" runs without a session (the public site's forms) */
  allow: ((p: Principal) => boolean) | "public";
  /** per-address limit of valid submissions, shared with the API operation of the same name */
  rateLimit?: { key: string; perMinute: number };
  revalidate?: string[];
}

/** Submissions one signed-in user may make a minute through actions without a limit of their own. */
export const ACTION_PER_MINUTE = 120;

// Public actions run for an anonymous visitor (a PublicActor, which no service taking an `Actor`
// accepts); every other action runs for the signed-in principal.
export function serverAction<S extends z.ZodType, T>(
  options: ActionOptions<S> & { allow: "public" },
  run: (actor: PublicActor, input: z.output<S>) => Promise<{ message: string; data?: T }>,
): (prev: ActionState<T>, form: FormData) => Promise<ActionState<T>>;
export function serverAction<S extends z.ZodType, T>(
  options: ActionOptions<S> & { allow: (p: Principal) => boolean },
  run: (actor: Actor, input: z.output<S>) => Promise<{ message: string; data?: T }>,
): (prev: ActionState<T>, form: FormData) => Promise<ActionState<T>>;
export function serverAction<S extends z.ZodType, T>(
  options: ActionOptions<S>,
  run: (actor: never, input: z.output<S>) => Promise<{ message: string; data?: T }>,
) {
  return async (_prev: ActionState<T>, form: FormData): Promise<ActionState<T>> => {
    const at = Date.now();
    const principal = await getSessionPrincipal();
    if (options.allow !== "public") {
      if (!principal) return { ok: false, message: "Your session has ended. Sign in again.", at };
      if (!options.allow(principal)) return { ok: false, message: "You are not allowed to do this.", at };
    }
    const parsed = options.schema.safeParse(options.fromForm(form));
    if (!parsed.success) {
      return { ok: false, message: "Check the highlighted fields.", fieldErrors: toFieldErrors(parsed.error.issues), values: echo(form), at };
    }
    try {
      refuseNul(parsed.data);
      // public forms: per address and form; signed-in users: per user, across actions (or the action's own limit)
      if (options.rateLimit) await consumeRateLimit(`${options.rateLimit.key}:${principal && options.allow !== "public" ? userKey(principal) : clientIp(await headers())}`, options.rateLimit.perMinute);
      else if (principal && options.allow !== "public") await consumeRateLimit(`action:${userKey(principal)}`, ACTION_PER_MINUTE);
      const actor = options.allow === "public" ? { principal: principal ?? anonymousPrincipal } : { principal: principal! };
      const result = await (run as (a: PublicActor, i: z.output<S>) => Promise<{ message: string; data?: T }>)(actor, parsed.data);
      for (const path of options.revalidate ?? []) revalidatePath(path);
      return { ok: true, message: result.message, data: result.data, at };
    } catch (e) {
      // a use case may end in redirect() (e.g. to the list after a delete): that is navigation, not failure
      unstable_rethrow(e);
      if (isAppError(e)) {
        if (e.code === "rate_limited") return { ok: false, message: "Too many requests; try again in a minute.", values: echo(form), at };
        const fieldErrors = Object.fromEntries(e.details.map((d) => [d.path, d.message]));
        // the fields say what is wrong; the form says where to look, as for a schema's refusal
        return { ok: false, message: e.code === "validation_failed" && e.details.length ? "Check the highlighted fields." : e.message, fieldErrors, values: echo(form), at };
      }
      logger.error("server action failed", { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      return { ok: false, message: "Something went wrong on our side. Try again.", values: echo(form), at };
    }
  };
}

function userKey(p: Principal): string {
  return ("userId" in p && p.userId) || p.keyId || p.label;
}

/** React resets a form after every action; echoing the input back lets a failed form keep it. */
function echo(form: FormData): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of form.entries()) if (typeof v === "string" && !/password|^\$/i.test(k)) out[k] = v;
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
