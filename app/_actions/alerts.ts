"use server";
import { z } from "zod";
import { createAlertRule, updateAlertRule } from "@/lib/alerts/alert-rules";
import { acknowledgeAlert } from "@/lib/alerts/acknowledge-alert";
import { retryNotification } from "@/lib/alerts/retry-notification";
import { createRuleBody, updateRuleBody } from "@/lib/alerts/schemas";
import { createSilence, createSilenceBody, endSilence } from "@/lib/alerts/silences";
import { formText, serverAction } from "@/lib/auth/action";

const pages = ["/admin/alerts", "/admin/alerts/rules", "/admin/alerts/notifications", "/admin/alerts/silences", "/admin"];

/** Decimal knobs (°C, %) come as text; anything that is not a number is passed on for the schema to name. */
const formNumber = (f: FormData, name: string) => {
  const v = formText(f, name);
  return v === undefined ? undefined : /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;
};
const checkbox = (f: FormData, name: string) => f.get(name) === "on";

const ruleFromForm = (f: FormData) => ({
  name: formText(f, "name"),
  cluster_id: formText(f, "cluster_id") ?? null,
  threshold: formNumber(f, "threshold"),
  window_s: formNumber(f, "window_s"),
  occurrences: formNumber(f, "occurrences"),
  severity: formText(f, "severity"),
  enabled: checkbox(f, "enabled"),
  notify: checkbox(f, "notify"),
  auto_remediate: checkbox(f, "auto_remediate"),
});

export const createAlertRuleAction = serverAction(
  {
    schema: createRuleBody,
    fromForm: (f) => ({ ...ruleFromForm(f), name: formText(f, "name") ?? "", rule_type: formText(f, "rule_type") }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const rule = await createAlertRule(actor, input);
    return { message: `Rule “${rule.name}” added. It is evaluated within 15 seconds.` };
  },
);

export const updateAlertRuleAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), change: updateRuleBody }),
    fromForm: (f) => ({ id: formText(f, "id"), change: ruleFromForm(f) }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { id, change }) => {
    const rule = await updateAlertRule(actor, id, change);
    return { message: `Rule “${rule.name}” saved.` };
  },
);

export const toggleAlertRuleAction = serverAction(
  {
    schema: z.object({ id: z.uuid(), enabled: z.boolean() }),
    fromForm: (f) => ({ id: formText(f, "id"), enabled: formText(f, "enabled") === "true" }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, { id, enabled }) => {
    const rule = await updateAlertRule(actor, id, { enabled });
    return { message: `“${rule.name}” ${rule.enabled ? "enabled" : "disabled"}.` };
  },
);

export const acknowledgeAlertAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator"], revalidate: pages },
  async (actor, { id }) => {
    const alert = await acknowledgeAlert(actor, id);
    return { message: `Acknowledged: ${alert.subjectLabel}.` };
  },
);

export const retryNotificationAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator"], revalidate: pages },
  async (actor, { id }) => {
    const n = await retryNotification(actor, id);
    return { message: `Queued again: ${n.subject}` };
  },
);

/** datetime-local gives "2026-12-01T08:00" (read as UTC, as the console shows every time). */
const utcInput = (f: FormData, name: string) => {
  const v = formText(f, name);
  return v && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v) ? `${v}:00Z` : v;
};

export const createSilenceAction = serverAction(
  {
    schema: createSilenceBody,
    fromForm: (f) => ({
      kind: formText(f, "kind") ?? "silence",
      rule_id: formText(f, "rule_id"),
      rule_type: formText(f, "rule_type"),
      cluster_id: formText(f, "cluster_id"),
      node_id: formText(f, "node_id"),
      subject_type: formText(f, "subject_type"),
      subject_id: formText(f, "subject_id"),
      reason: formText(f, "reason") ?? "",
      starts_at: utcInput(f, "starts_at"),
      duration_s: formNumber(f, "duration_s"),
    }),
    access: ["operator"],
    revalidate: pages,
  },
  async (actor, input) => {
    const s = await createSilence(actor, input);
    const until = s.endsAt.toISOString().slice(0, 16).replace("T", " ");
    return { message: s.startsAt > new Date() ? `Maintenance window scheduled until ${until} UTC.` : `Silenced until ${until} UTC.` };
  },
);

export const endSilenceAction = serverAction(
  { schema: z.object({ id: z.uuid() }), fromForm: (f) => ({ id: formText(f, "id") }), access: ["operator"], revalidate: pages },
  async (actor, { id }) => {
    const s = await endSilence(actor, id);
    return { message: s.kind === "maintenance" ? "Window ended; its alerts notify again." : "Silence ended; its alerts notify again." };
  },
);
