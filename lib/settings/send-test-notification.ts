import "server-only";
import { postWebhook, sendEmail } from "@/lib/alerts/channels";
import { activeChannels, channelConfig } from "@/lib/alerts/notification-outbox";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";

export interface TestResult {
  channel: "email" | "webhook";
  target: string;
  ok: boolean;
  error?: string;
}

/**
 * Sends one test message through every channel in force now (the console's settings over the
 * environment's), at once and outside the outbox, and says what each answered. Audited.
 */
export async function sendTestNotification(actor: Actor): Promise<TestResult[]> {
  assertOperator(actor.principal);
  const cfg = await channelConfig();
  const channels = (await activeChannels(cfg)).filter((c) => c.channel !== "console");
  const subject = "[GPUForge] Test notification";
  const text = `${subject}\nSent by ${actor.principal.label} from Settings to check this channel. Alerts arrive like this.\n${cfg.publicUrl.replace(/\/$/, "")}/admin/settings`;
  const results = await Promise.all(
    channels.map(async (c): Promise<TestResult> => {
      try {
        if (c.channel === "email") await sendEmail(cfg.smtpUrl!, { from: cfg.emailFrom, to: c.target.split(", "), subject, text });
        else await postWebhook(cfg.webhookUrl!, { text, gpuforge: { kind: "test", sent_by: actor.principal.label } });
        return { channel: c.channel as TestResult["channel"], target: c.target, ok: true };
      } catch (e) {
        return { channel: c.channel as TestResult["channel"], target: c.target, ok: false, error: (e as Error).message.slice(0, 300) };
      }
    }),
  );
  await db().$transaction((tx) =>
    recordAudit(tx, actor, {
      action: "settings.test_notification_sent",
      targetType: "settings",
      targetId: "notifications",
      details: { results: results.map((r) => ({ channel: r.channel, ok: r.ok, ...(r.error ? { error: r.error } : {}) })) },
    }),
  );
  return results;
}
