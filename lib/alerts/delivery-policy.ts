// How the notification outbox retries, and what its messages say, pure.
import { chatLine, plainLine } from "./chat-text";

/** Chat webhooks get escaped text; email and the operator plane get it as written. */
export type MessageFormat = "plain" | "chat";

/** Attempts before a notification is marked failed (it stays listed; an operator can retry it). */
export const MAX_DELIVERY_ATTEMPTS = 12;

/** Wait after failed attempt n (1-based): 10 s, 20 s, 40 s … capped at 30 minutes. Twelve attempts span about 2.5 hours. */
export function deliveryBackoffSeconds(attempt: number): number {
  return Math.min(1800, 10 * 2 ** Math.max(0, attempt - 1));
}

export interface NotificationText {
  subject: string;
  text: string;
}

export interface AlertForText {
  status: "firing" | "resolved";
  severity: string;
  rule_name: string;
  subject_label: string;
  message: string;
  fired_at: Date;
  resolved_at: Date | null;
  link: string;
}

/** What an email and a chat message say about an alert; every value may carry a tenant's words. */
export function notificationText(a: AlertForText, format: MessageFormat = "plain"): NotificationText {
  const v = format === "chat" ? chatLine : plainLine;
  const head = a.status === "firing" ? `FIRING ${a.severity}` : "RESOLVED";
  const subject = `[GPUForge] ${head}: ${v(a.rule_name)} — ${v(a.subject_label)}`;
  const lines = [
    `${head}: ${v(a.rule_name)}`,
    v(a.message),
    `Subject: ${v(a.subject_label)}`,
    `Fired: ${a.fired_at.toISOString()}`,
    ...(a.resolved_at ? [`Resolved: ${a.resolved_at.toISOString()}`] : []),
    `Details: ${a.link}`,
  ];
  return { subject, text: lines.join("\n") };
}
