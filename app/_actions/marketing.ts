"use server";
import { headers } from "next/headers";
import type { z } from "zod";
import type { ActionState } from "@/lib/auth/action";
import { formText } from "@/lib/auth/action";
import { isAppError } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { consumeRateLimit } from "@/lib/http/rate-limit";
import { clientIp } from "@/lib/http/route";
import { logger } from "@/lib/logger";
import { createDemoRequest, signUpEarlyAccess } from "@/lib/marketing/site";
import { demoRequestBody, earlyAccessBody } from "@/lib/marketing/schemas";

// The public site's forms. No session: each is validated with the API's schema and rate-limited
// per address, the same limits as POST /api/demo-requests and /api/early-access.

async function publicForm<S extends z.ZodType>(key: string, perMinute: number, schema: S, input: unknown, form: FormData, run: (data: z.output<S>) => Promise<string>): Promise<ActionState> {
  const at = Date.now();
  const values = Object.fromEntries([...form.entries()].filter(([k, v]) => typeof v === "string" && !k.startsWith("$")).map(([k, v]) => [k, String(v)]));
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const d of zodIssuesToDetails(parsed.error.issues)) fieldErrors[d.path] ??= d.message;
    return { ok: false, message: "Check the highlighted fields.", fieldErrors, values, at };
  }
  try {
    await consumeRateLimit(`${key}:${clientIp(await headers())}`, perMinute);
    return { ok: true, message: await run(parsed.data), at };
  } catch (e) {
    if (isAppError(e)) return { ok: false, message: e.code === "rate_limited" ? "Too many requests from your network; try again in a minute." : e.message, values, at };
    logger.error("public form failed", { form: key, error: String(e) });
    return { ok: false, message: "Something went wrong on our side. Try again, or write to us.", values, at };
  }
}

export async function requestDemoAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const input = { name: formText(form, "name") ?? "", email: formText(form, "email") ?? "", company: formText(form, "company"), message: formText(form, "message") };
  return publicForm("createDemoRequest", 20, demoRequestBody, input, form, async (data) => {
    await createDemoRequest(data);
    return `Thanks, ${data.name.split(" ")[0]}. We will write to ${data.email} within one business day.`;
  });
}

export async function earlyAccessAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  return publicForm("createEarlyAccess", 20, earlyAccessBody, { email: formText(form, "email") ?? "" }, form, async (data) => {
    await signUpEarlyAccess(data.email);
    return "You are on the list. We will email you when the next release opens.";
  });
}
