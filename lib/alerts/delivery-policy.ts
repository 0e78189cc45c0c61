// How the notification outbox retries, pure.

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

/** What an email and a chat message say about an alert. */
export function notificationText(a: AlertForText): NotificationText {
  const head = a.status === "firing" ? `FIRING ${a.severity}` : "RESOLVED";
  const subject = `[GPUForge] ${head}: ${a.rule_name} — ${a.subject_label}`;
  const lines = [
    `${head}: ${a.rule_name}`,
    a.message,
    `Subject: ${a.subject_label}`,
    `Fired: ${a.fired_at.toISOString()}`,
    ...(a.resolved_at ? [`Resolved: ${a.resolved_at.toISOString()}`] : []),
    `Details: ${a.link}`,
  ];
  return { subject, text: lines.join("\n") };
}
