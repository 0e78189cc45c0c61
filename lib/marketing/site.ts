import "server-only";
import { createHmac } from "node:crypto";
import type { z } from "zod";
import { assertOperator, type Actor, type Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { chatLine, chatQuote, plainLine } from "@/lib/alerts/chat-text";
import type { MessageFormat } from "@/lib/alerts/delivery-policy";
import { activeChannels, channelConfig, formatFor, queueNotifications, type ChannelConfig } from "@/lib/alerts/notification-outbox";
import { db, pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { authSecret, env } from "@/lib/env";
import { bucketGrid, type TimeRange } from "@/lib/metrics/time-range";
import { notFound } from "@/lib/errors";
import { afterCursor, decodeCursor, page } from "@/lib/http/pagination";
import { oneOf } from "@/lib/vocabulary";
import { referrerHost, sessionHash } from "./privacy";
import { DEMO_REQUEST_STATUSES, type demoRequestJsonSchema } from "./schemas";
import { SITE_REFERRERS, SITE_TOP_PAGES, SITE_TOTALS, SITE_VIEWS_BY_STEP } from "./statements";

/** A visitor asks for a demo: stored for the operators' inbox and announced through the notification outbox. */
export async function createDemoRequest(
  input: { name: string; email: string; company?: string; message?: string },
  config?: ChannelConfig,
) {
  const cfg = config ?? (await channelConfig());
  const request = await db().demoRequest.create({
    data: { name: input.name, email: input.email, company: input.company || null, message: input.message || null },
  });
  const channels = await activeChannels(cfg);
  const inbox = `${cfg.publicUrl.replace(/\/$/, "")}/admin/demo-requests`;
  // everything here was typed by a visitor: escaped for chat channels, the message quoted
  const render = (format: MessageFormat) => {
    const v = format === "chat" ? chatLine : plainLine;
    const subject = `[GPUForge] Demo request from ${v(request.name)}${request.company ? ` (${v(request.company)})` : ""}`;
    const message = request.message ? (format === "chat" ? chatQuote(request.message) : request.message) : null;
    return {
      subject,
      body: [subject, `Email: ${v(request.email)}`, message ? `Message:\n${message}` : null, `Inbox: ${inbox}`].filter(Boolean).join("\n"),
    };
  };
  await queueNotifications(
    channels.map((c) => ({ demoRequestId: request.id, kind: "demo_request", ...c, ...render(formatFor(c.channel)) })),
  );
  return request;
}

/** Early-access signup; signing up twice is not an error and adds nothing (and says nothing about it). */
export async function signUpEarlyAccess(email: string): Promise<void> {
  await db().earlyAccess.createMany({ data: [{ email }], skipDuplicates: true });
}

export function demoRequestJson(r: {
  id: string;
  name: string;
  email: string;
  company: string | null;
  message: string | null;
  status: string;
  handledBy: string | null;
  createdAt: Date;
}): z.input<typeof demoRequestJsonSchema> {
  return {
    id: r.id,
    name: r.name,
    email: r.email,
    company: r.company,
    message: r.message,
    status: oneOf(DEMO_REQUEST_STATUSES, r.status, "demo_requests.status"),
    handled_by: r.handledBy,
    created_at: r.createdAt.toISOString(),
  };
}

export async function listDemoRequests(p: Principal, q: { limit: number; cursor?: string; status?: string }) {
  assertOperator(p);
  const rows = await db().demoRequest.findMany({
    where: { ...(q.status ? { status: q.status } : {}), ...afterCursor(decodeCursor(q.cursor)) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit + 1,
  });
  return page(rows, q.limit);
}

export async function updateDemoRequest(actor: Actor, id: string, status: "new" | "contacted" | "closed") {
  assertOperator(actor.principal);
  return db().$transaction(async (tx) => {
    const found = await tx.demoRequest.findUnique({ where: { id }, select: { id: true } });
    if (!found) throw notFound("Demo request");
    const r = await tx.demoRequest.update({
      where: { id },
      data: { status, handledBy: status === "new" ? null : actor.principal.label, handledAt: status === "new" ? null : new Date() },
    });
    await recordAudit(tx, actor, { action: "demo_request.updated", targetType: "demo_request", targetId: id, details: { status } });
    return r;
  });
}

export async function recordPageView(
  input: { path: string; referrer?: string },
  visitor: { ip: string; userAgent: string; host: string | null },
) {
  const path = input.path.split(/[?#]/)[0]!.slice(0, 300) || "/";
  await db().pageView.create({
    data: {
      path,
      referrerHost: referrerHost(input.referrer, visitor.host),
      sessionHash: sessionHash(visitor.ip, visitor.userAgent, analyticsSalt()),
    },
    select: { id: true },
  });
}

/** ANALYTICS_SALT, or a key derived from the session secret (never the secret itself, never a constant). */
export function analyticsSalt(): string {
  return env().ANALYTICS_SALT ?? createHmac("sha256", authSecret()).update("gpuforge page-view session salt").digest("hex");
}

/** Views per day, top pages, referrers and demo-request conversion over the last `days` days (the API's summary). */
export async function siteAnalytics(days: number) {
  const to = new Date();
  const a = await siteAnalyticsOver({ from: new Date(to.getTime() - days * 86_400_000), to, stepS: 86_400 });
  const { series, ...rest } = a;
  return {
    days,
    ...rest,
    by_day: series.map((r) => ({ day: new Date(r.t).toISOString().slice(0, 10), views: r.views, sessions: r.sessions })),
  };
}

/**
 * The same figures over any range, with views and visitors per step of it (every step present:
 * a step without views is a zero, not a missing point) — the analytics page's range picker.
 */
export async function siteAnalyticsOver(range: Pick<TimeRange, "from" | "to" | "stepS">) {
  const args = [range.from, range.to] as const;
  const [totals, bySteps, pages, refs] = await Promise.all([
    run(pool(), SITE_TOTALS, [...args]),
    run(pool(), SITE_VIEWS_BY_STEP, [...args, range.stepS]),
    run(pool(), SITE_TOP_PAGES, [...args]),
    run(pool(), SITE_REFERRERS, [...args]),
  ]);
  const t = totals[0]!;
  const byT = new Map(bySteps.map((r) => [r.t.getTime(), r]));
  return {
    views: t.views,
    sessions: t.sessions,
    demo_requests: t.demos,
    early_access: t.early,
    conversion_pct: t.sessions ? Math.round((1000 * t.demos) / t.sessions) / 10 : null,
    series: bucketGrid(range.from, range.to, range.stepS).map((x) => ({
      t: x,
      views: byT.get(x)?.views ?? 0,
      sessions: byT.get(x)?.sessions ?? 0,
    })),
    top_pages: pages,
    referrers: refs,
  };
}
