"use client";
import { useState } from "react";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

/** A one-button form (acknowledge, retry, enable/disable) that reports its outcome beside the button. */
export function InlineAction({ action, fields, label, variant = "secondary" }: { action: FormAction; fields: Record<string, string>; label: string; variant?: "primary" | "secondary" | "danger" }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} className="inline-flex items-center gap-2">
      {Object.entries(fields).map(([k, v]) => <input key={k} type="hidden" name={k} value={v} />)}
      <SubmitButton size="sm" variant={variant}>{label}</SubmitButton>
      {state.message && !state.ok ? <span role="alert" className="text-xs text-red-700">{state.message}</span> : null}
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
export function RuleForm({ action, types, clusters, rule }: { action: FormAction; types: RuleTypeOption[]; clusters: Array<{ id: string; name: string }>; rule?: RuleValues }) {
  const { state, dispatch, formRef } = useActionForm(action, !rule);
  const [type, setType] = useState(rule?.rule_type ?? types[0]!.value);
  const spec = types.find((t) => t.value === type)!;
  const e = state.fieldErrors ?? {};
  const v = state.values ?? {};
  const val = (name: keyof RuleValues, fallback: string) => v[name] ?? (rule ? String(rule[name] ?? "") : fallback);
  const k = `${state.at}-${type}`;
  const checked = (name: "enabled" | "notify" | "auto_remediate", fallback: boolean) => (v[name] !== undefined ? v[name] === "on" : rule ? rule[name] : fallback);
  return (
    <form ref={formRef} action={dispatch} aria-label={rule ? "Edit rule" : "Add rule"} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-3">
      {rule?.id ? <input type="hidden" name="id" value={rule.id} /> : null}
      <Field label="Name" name="name" error={e.name}>{(p) => <input {...p} key={`n${k}`} defaultValue={val("name", "")} required maxLength={120} placeholder="H100 overheating" />}</Field>
      <Field label="Type" name="rule_type" error={e.rule_type} hint={spec.description}>
        {(p) => (
          <select {...p} value={type} disabled={Boolean(rule)} onChange={(ev) => setType(ev.target.value)}>
            {types.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}
          </select>
        )}
      </Field>
      <Field label="Scope" name="cluster_id" error={e.cluster_id}>
        {(p) => (
          <select {...p} key={`c${k}`} defaultValue={val("cluster_id", "")}>
            <option value="">Whole fleet</option>
            {clusters.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
          </select>
        )}
      </Field>
      {spec.threshold ? (
        <Field label="Threshold" name="threshold" error={e.threshold} hint={spec.threshold}>
          {(p) => <input {...p} key={`t${k}`} inputMode="decimal" defaultValue={val("threshold", String(spec.defaults.threshold))} />}
        </Field>
      ) : null}
      {spec.window ? (
        <Field label="Window (seconds)" name="window_s" error={e.window_s} hint={spec.window}>
          {(p) => <input {...p} key={`w${k}`} inputMode="numeric" defaultValue={val("window_s", String(spec.defaults.window_s))} />}
        </Field>
      ) : null}
      {spec.occurrences ? (
        <Field label="Occurrences" name="occurrences" error={e.occurrences} hint={spec.occurrences}>
          {(p) => <input {...p} key={`o${k}`} inputMode="numeric" defaultValue={val("occurrences", String(spec.defaults.occurrences))} />}
        </Field>
      ) : null}
      <Field label="Severity" name="severity" error={e.severity}>
        {(p) => (
          <select {...p} key={`s${k}`} defaultValue={val("severity", "warning")}>
            <option value="info">info</option>
            <option value="warning">warning</option>
            <option value="critical">critical</option>
          </select>
        )}
      </Field>
      <fieldset className="flex flex-wrap items-center gap-x-6 gap-y-2 sm:col-span-2 lg:col-span-3">
        <legend className="sr-only">Behaviour</legend>
        <Check name="enabled" label="Enabled" defaultChecked={checked("enabled", true)} k={k} />
        <Check name="notify" label="Notify (email / webhook)" defaultChecked={checked("notify", true)} k={k} />
        {spec.remediable ? <Check name="auto_remediate" label="Quarantine the node automatically (within the cap)" defaultChecked={checked("auto_remediate", false)} k={k} /> : null}
        {e.auto_remediate ? <p className="text-xs text-red-600">{e.auto_remediate}</p> : null}
      </fieldset>
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-3">
        <SubmitButton>{rule ? "Save rule" : "Add rule"}</SubmitButton>
        <div className="flex-1"><FormMessage state={state} /></div>
      </div>
    </form>
  );
}

function Check({ name, label, defaultChecked, k }: { name: string; label: string; defaultChecked: boolean; k: string }) {
  return (
    <label className="inline-flex items-center gap-2 text-sm text-slate-800">
      <input key={`${name}${k}`} type="checkbox" name={name} defaultChecked={defaultChecked} className="h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-600" />
      {label}
    </label>
  );
}
