import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { db, pool } from "@/lib/db/client";
import { run, type RowOf } from "@/lib/db/statement";
import { logger } from "@/lib/logger";
import { publicUrl } from "@/lib/platform/public-url";
import { effectiveSettings } from "@/lib/settings/settings";
import { accountMailBodies, accountMailFrom } from "@/lib/mail/account-mail-bodies";
import { postWebhook, sendEmail } from "./channels";
import { silencedAmong } from "./silences";
import { deliveryBackoffSeconds, MAX_DELIVERY_ATTEMPTS, notificationText, type MessageFormat } from "./delivery-policy";
import {
  CLAIM_DUE_NOTIFICATIONS,
  EVENTS_TO_NOTIFY,
  MARK_NOTIFICATION_FAILED,
  MARK_NOTIFICATION_SENT,
  OPERATOR_EMAILS,
} from "./notification-statements";

// The notification outbox. Rows are written in the evaluator's run, delivered by a background
// function that claims them with a lease, retried with backoff, and never deleted: a channel that
// is down delays a notification, it does not lose it.

export interface ChannelConfig {
  smtpUrl?: string;
  emailFrom: string;
  emailTo: string[];
  webhookUrl?: string;
  publicUrl: string;
}

/** The channels in force: the console's settings over the environment's (lib/settings). */
export async function channelConfig(): Promise<ChannelConfig> {
  const { notifications: n } = await effectiveSettings();
  return { ...n, publicUrl: publicUrl() };
}

/** A webhook URL carries its secret in the path: only the host is ever stored or shown. */
function redactWebhook(url: string): string {
  try {
    return `webhook ${new URL(url).host}`;
  } catch {
    return "webhook";
  }
}

async function emailRecipients(cfg: ChannelConfig): Promise<string[]> {
  if (cfg.emailTo.length) return cfg.emailTo;
  const rows = await run(pool(), OPERATOR_EMAILS);
  return rows.map((r) => r.email);
}

/** The channels a notification goes to now: email and/or webhook when configured, else the console. */
export async function activeChannels(cfg: ChannelConfig): Promise<Array<{ channel: string; target: string }>> {
  const recipients = cfg.smtpUrl ? await emailRecipients(cfg) : [];
  const channels: Array<{ channel: string; target: string }> = [
    ...(cfg.smtpUrl && recipients.length ? [{ channel: "email", target: recipients.join(", ") }] : []),
    ...(cfg.webhookUrl ? [{ channel: "webhook", target: redactWebhook(cfg.webhookUrl) }] : []),
  ];
  if (channels.length === 0) channels.push({ channel: "console", target: "operator plane" });
  return channels;
}

/**
 * Queues one notification per configured channel for each event (firing or resolved). With no
 * channel configured, a `console` row records that the operator plane is where it is read.
 * Enqueuing the same event twice adds nothing (unique per event, kind and channel).
 */
export async function enqueueNotifications(eventIds: string[], kind: "firing" | "resolved", config?: ChannelConfig): Promise<number> {
  if (eventIds.length === 0) return 0;
  const cfg = config ?? (await channelConfig());
  const events = await run(pool(), EVENTS_TO_NOTIFY, [eventIds]);
  // a silence or maintenance window keeps its alerts quiet: listed in the plane, announced nowhere
  const silenced = await silencedAmong(events);
  const channels = await activeChannels(cfg);
  const rows = events
    .filter((e) => !silenced.has(e.id))
    .flatMap((e) => {
      const alert = {
        status: kind,
        severity: e.severity,
        rule_name: e.rule_name ?? SYSTEM_EVENT_NAMES[e.rule_type] ?? e.rule_type,
        subject_label: e.subject_label,
        message: e.message,
        fired_at: e.fired_at,
        resolved_at: kind === "resolved" ? e.resolved_at : null,
        link: `${cfg.publicUrl.replace(/\/$/, "")}/admin/alerts?alert=${e.id}`,
      };
      return channels.map((c) => {
        const text = notificationText(alert, formatFor(c.channel));
        return { alertEventId: e.id, kind, ...c, subject: text.subject, body: text.text };
      });
    });
  return queueNotifications(rows);
}

/** How events without a rule are named in messages. */
const SYSTEM_EVENT_NAMES: Record<string, string> = {
  remediation_capped: "Automatic remediation capped",
  unexpected_payment: "Payment received for a settled invoice",
  provisioning_failed: "Provisioning failed",
  node_address_changed: "A node's address changed",
};

/** A webhook is a chat channel (its text is escaped); email and the console take text as written. */
export function formatFor(channel: string): MessageFormat {
  return channel === "webhook" ? "chat" : "plain";
}

export interface OutboxRow {
  alertEventId?: string;
  demoRequestId?: string;
  invoiceId?: string;
  kind: "firing" | "resolved" | "demo_request" | "invoice";
  channel: string;
  target: string;
  subject: string;
  body: string;
}

/**
 * Writes outbox rows (once each: the unique indexes skip repeats) and wakes the deliverer. A
 * console row is already where it will be read, so it is recorded as sent.
 */
export async function queueNotifications(rows: OutboxRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { count } = await db().notification.createMany({
    data: rows.map((r) => ({
      ...r,
      status: r.channel === "console" ? "sent" : "pending",
      sentAt: r.channel === "console" ? new Date() : null,
    })),
    skipDuplicates: true,
  });
  if (rows.some((r) => r.channel !== "console")) await emitEvent("alerts/notifications.queued", { count: rows.length });
  return count;
}

type Claimed = RowOf<typeof CLAIM_DUE_NOTIFICATIONS>;

/** How long a claimed notification is held before another deliverer may try it (a crashed one). */
const LEASE_S = 120;

async function send(n: Claimed, cfg: ChannelConfig): Promise<void> {
  if (n.kind === "account") {
    if (!cfg.smtpUrl) throw new Error("email is no longer configured (Settings → Notification channels)");
    await sendEmail(cfg.smtpUrl, { from: accountMailFrom(cfg), to: [n.target], subject: n.subject, ...accountMailBodies(n) });
    return;
  }
  if (n.channel === "email") {
    if (!cfg.smtpUrl) throw new Error("email is no longer configured (Settings → Notification channels)");
    await sendEmail(cfg.smtpUrl, { from: cfg.emailFrom, to: n.target.split(", "), subject: n.subject, text: n.body });
    return;
  }
  if (n.channel === "webhook") {
    if (!cfg.webhookUrl) throw new Error("the webhook is no longer configured (Settings → Notification channels)");
    await postWebhook(cfg.webhookUrl, {
      text: `${n.subject}\n${n.body}`,
      gpuforge: n.alert_event_id
        ? {
            notification_id: n.id,
            alert_id: n.alert_event_id,
            kind: n.kind,
            severity: n.severity,
            rule_type: n.rule_type,
            subject: n.subject_label,
          }
        : { notification_id: n.id, demo_request_id: n.demo_request_id, kind: n.kind },
    });
  }
}

/** Delivers due notifications (at most `batch` per run). Each is claimed under a lease, so parallel deliverers never send one twice at once. */
export async function deliverNotifications(config?: ChannelConfig, batch = 50): Promise<{ sent: number; retried: number; failed: number }> {
  const cfg = config ?? (await channelConfig());
  const rows = await run(pool(), CLAIM_DUE_NOTIFICATIONS, [batch, LEASE_S]);
  const out = { sent: 0, retried: 0, failed: 0 };
  await Promise.all(
    rows.map(async (n) => {
      try {
        await send(n, cfg);
        await run(pool(), MARK_NOTIFICATION_SENT, [n.id]);
        out.sent++;
      } catch (e) {
        const error = (e as Error).message.slice(0, 500);
        const giveUp = n.attempts >= MAX_DELIVERY_ATTEMPTS;
        await run(pool(), MARK_NOTIFICATION_FAILED, [n.id, giveUp ? "failed" : "pending", error, deliveryBackoffSeconds(n.attempts)]);
        if (giveUp) out.failed++;
        else out.retried++;
        logger.warn("notification delivery failed", { id: n.id, channel: n.channel, attempt: n.attempts, error });
      }
    }),
  );
  return out;
}
