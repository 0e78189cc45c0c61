"use client";
import { useId } from "react";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, useLiveField, type FormAction } from "./use-action-form";

/** A one-button form (acknowledge, retry, enable/disable) that reports its outcome beside the button. */
export function InlineAction({
  action,
  fields,
  label,
  variant = "secondary",
}: {
  action: FormAction;
  fields: Record<string, string>;
  label: string;
  variant?: "primary" | "secondary" | "danger";
}) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} className="inline-flex items-center gap-2">
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <SubmitButton size="sm" variant={variant}>
        {label}
      </SubmitButton>
      {state.message && !state.ok ? (
        <span role="alert" className="text-xs text-red-700">
          {state.message}
        </span>
      ) : null}
    </form>
  );
}

export interface RuleTypeOption {
  value: string;
  label: string;
  description: string;
  threshold: string | null;
  window: string | null;
  occurrences: string | null;
  remediable: boolean;
  defaults: { threshold: number; window_s: number; occurrences: number };
}

export interface RuleValues {
  id?: string;
  name: string;
  rule_type: string;
  cluster_id: string | null;
  threshold: number;
  window_s: number;
  occurrences: number;
  severity: string;
  enabled: boolean;
  notify: boolean;
  auto_remediate: boolean;
}

/** Creates a rule, or edits one (its type is fixed). Knobs the type does not use are not shown. */
export function RuleForm({
  action,
  types,
  clusters,
  rule,
}: {
  action: FormAction;
  types: RuleTypeOption[];
  clusters: Array<{ id: string; name: string }>;
  rule?: RuleValues;
}) {
  const { state, dispatch, formRef } = useActionForm(action, !rule);
  const f = formFields(state);
  // the type decides which knobs show: what the box shows, after a refusal (what was sent) and a success (the default) alike
  const [type, setType] = useLiveField(f, "rule_type", rule?.rule_type ?? types[0]!.value);
  const spec = types.find((t) => t.value === type) ?? types[0]!;
  // the knobs remount with the type, showing that type's defaults; what a refusal echoed is kept
  // only while the type is the one it was sent with (another type's threshold means something else)
  const sentType = state.values ? (state.values.rule_type ?? rule?.rule_type) : undefined;
  const k = formFields(sentType === type ? state : { ...state, values: undefined }, { remountWith: type });
  /** the rule's stored value when editing, else the form's default */
  const start = (name: keyof RuleValues, fallback: string) => (rule ? String(rule[name] ?? "") : fallback);
  const checked = (name: "enabled" | "notify" | "auto_remediate", fallback: boolean) => f.checked(name, rule ? rule[name] : fallback);
  return (
    <form
      ref={formRef}
      action={dispatch}
      aria-label={rule ? "Edit rule" : "Add rule"}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-3"
    >
      {rule?.id ? <input type="hidden" name="id" value={rule.id} /> : null}
      <Field label="Name" {...f("name", start("name", ""))}>
        {(p) => <input {...p} required maxLength={120} placeholder="H100 overheating" />}
      </Field>
      <Field label="Type" {...f("rule_type", rule?.rule_type ?? types[0]!.value)} hint={spec.description}>
        {(p) => (
          <select {...p} disabled={Boolean(rule)} onChange={(ev) => setType(ev.target.value)}>
            {types.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Scope" {...f("cluster_id", start("cluster_id", ""))}>
        {(p) => (
          <select {...p}>
            <option value="">Whole fleet</option>
            {clusters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {spec.threshold ? (
        <Field label="Threshold" {...k("threshold", start("threshold", String(spec.defaults.threshold)))} hint={spec.threshold}>
          {(p) => <input {...p} inputMode="decimal" />}
        </Field>
      ) : null}
      {spec.window ? (
        <Field label="Window (seconds)" {...k("window_s", start("window_s", String(spec.defaults.window_s)))} hint={spec.window}>
          {(p) => <input {...p} inputMode="numeric" />}
        </Field>
      ) : null}
      {spec.occurrences ? (
        <Field label="Occurrences" {...k("occurrences", start("occurrences", String(spec.defaults.occurrences)))} hint={spec.occurrences}>
          {(p) => <input {...p} inputMode="numeric" />}
        </Field>
      ) : null}
      <Field label="Severity" {...f("severity", start("severity", "warning"))}>
        {(p) => (
          <select {...p}>
            <option value="info">info</option>
            <option value="warning">warning</option>
            <option value="critical">critical</option>
          </select>
        )}
      </Field>
      <fieldset className="flex flex-wrap items-center gap-x-6 gap-y-2 sm:col-span-2 lg:col-span-3">
        <legend className="sr-only">Behaviour</legend>
        <Check name="enabled" label="Enabled" defaultChecked={checked("enabled", true)} remount={f.key} />
        <Check name="notify" label="Notify (email / webhook)" defaultChecked={checked("notify", true)} remount={f.key} />
        {spec.remediable ? (
          <Check
            name="auto_remediate"
            label="Quarantine the node automatically (within the cap)"
            defaultChecked={k.checked("auto_remediate", rule ? rule.auto_remediate : false)}
            remount={k.key}
          />
        ) : null}
        {f.error("auto_remediate") ? <p className="text-xs text-red-600">{f.error("auto_remediate")}</p> : null}
      </fieldset>
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-3">
        <SubmitButton>{rule ? "Save rule" : "Add rule"}</SubmitButton>
        <div className="flex-1">
          <FormMessage state={state} />
        </div>
      </div>
    </form>
  );
}

function Check({ name, label, defaultChecked, remount }: { name: string; label: string; defaultChecked: boolean; remount: string }) {
  return (
    <label className="inline-flex items-center gap-2 text-sm text-slate-800">
      <input
        key={remount}
        type="checkbox"
        name={name}
        defaultChecked={defaultChecked}
        className="h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-600"
      />
      {label}
    </label>
  );
}

const DURATIONS: Array<[string, string]> = [
  ["3600", "1 hour"],
  ["14400", "4 hours"],
  ["86400", "24 hours"],
  ["604800", "7 days"],
];

/** Silences one rule's alerts about one subject for a while, from the alert's row: nobody is notified meanwhile. */
export function SilenceForm({
  action,
  alert,
}: {
  action: FormAction;
  alert: { id: string; label: string; ruleId: string; subjectType: string; subjectId: string };
}) {
  const { state, dispatch } = useActionForm(action, false);
  // the same alert can be on the page twice (firing now, and in the list below): ids per form, not per alert
  const id = useId();
  if (state.ok)
    return (
      <span role="status" className="text-xs text-emerald-700">
        {state.message}
      </span>
    );
  return (
    <details className="text-xs">
      <summary className="cursor-pointer font-medium text-slate-600 hover:text-slate-900">Silence…</summary>
      <form action={dispatch} aria-label={`Silence alerts about ${alert.label}`} className="mt-2 flex w-60 flex-col gap-2">
        <input type="hidden" name="rule_id" value={alert.ruleId} />
        <input type="hidden" name="subject_type" value={alert.subjectType} />
        <input type="hidden" name="subject_id" value={alert.subjectId} />
        <label className="font-medium text-slate-700" htmlFor={`${id}-duration`}>
          For
        </label>
        <select id={`${id}-duration`} name="duration_s" defaultValue="14400" className="rounded-md px-2 py-1 ring-1 ring-slate-300">
          {DURATIONS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        <label className="font-medium text-slate-700" htmlFor={`${id}-reason`}>
          Why
        </label>
        <input
          id={`${id}-reason`}
          name="reason"
          required
          minLength={3}
          maxLength={500}
          className="rounded-md px-2 py-1 ring-1 ring-slate-300"
          placeholder="known issue, ticket OPS-123"
        />
        <SubmitButton size="sm" variant="secondary">
          Silence
        </SubmitButton>
        {state.message ? (
          <span role="alert" className="text-red-700">
            {state.message}
          </span>
        ) : null}
      </form>
    </details>
  );
}

/** A silence or a scheduled maintenance window, by hand: what it covers, when, and why. */
export function CreateSilenceForm({
  action,
  rules,
  clusters,
  nodes,
  types,
}: {
  action: FormAction;
  rules: Array<{ id: string; name: string }>;
  clusters: Array<{ id: string; name: string }>;
  nodes: Array<{ id: string; hostname: string }>;
  types: Array<[string, string]>;
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  const [kind, setKind] = useLiveField(f, "kind", "maintenance");
  const opt = (v: string, l: string) => (
    <option key={v} value={v}>
      {l}
    </option>
  );
  return (
    <form
      ref={formRef}
      action={dispatch}
      aria-label="Create a silence or maintenance window"
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4"
    >
      <Field label="Kind" {...f("kind", "maintenance")}>
        {(p) => (
          <select {...p} onChange={(ev) => setKind(ev.target.value)}>
            <option value="maintenance">Maintenance window (cluster or node)</option>
            <option value="silence">Silence</option>
          </select>
        )}
      </Field>
      <Field label="Cluster" {...f("cluster_id", "")}>
        {(p) => (
          <select {...p}>
            {opt("", "Any cluster")}
            {clusters.map((c) => opt(c.id, c.name))}
          </select>
        )}
      </Field>
      <Field label="Node" {...f("node_id", "")}>
        {(p) => (
          <select {...p}>
            {opt("", "Any node")}
            {nodes.map((n) => opt(n.id, n.hostname))}
          </select>
        )}
      </Field>
      <Field label="Rule" {...f("rule_id", "")} hint={kind === "maintenance" ? "Empty: every rule" : undefined}>
        {(p) => (
          <select {...p}>
            {opt("", "Any rule")}
            {rules.map((r) => opt(r.id, r.name))}
          </select>
        )}
      </Field>
      <Field label="Alert type" {...f("rule_type", "")}>
        {(p) => (
          <select {...p}>
            {opt("", "Any type")}
            {types.map(([v, l]) => opt(v, l))}
          </select>
        )}
      </Field>
      <Field label="Starts (UTC)" {...f("starts_at")} hint="Empty: now">
        {(p) => <input {...p} type="datetime-local" />}
      </Field>
      <Field label="Lasts" {...f("duration_s", "14400")}>
        {(p) => <select {...p}>{DURATIONS.map(([v, l]) => opt(v, l))}</select>}
      </Field>
      <Field label="Why" {...f("reason")}>
        {(p) => <input {...p} required minLength={3} maxLength={500} placeholder="rack 7 firmware update" />}
      </Field>
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>{kind === "maintenance" ? "Schedule window" : "Start silence"}</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}
