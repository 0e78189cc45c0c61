"use client";
import { Badge } from "@/components/ui/badge";
import { formFields, type FieldBinding } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

type Source = "console" | "environment" | "default" | "none";
const SOURCE_LABEL: Record<Source, string> = {
  console: "set here",
  environment: "from the deployment",
  default: "built-in default",
  none: "not set",
};

export function SourceBadge({ source }: { source: Source }) {
  return <Badge tone={source === "console" ? "indigo" : source === "none" ? "neutral" : "sky"}>{SOURCE_LABEL[source]}</Badge>;
}

interface SecretState {
  source: Source;
  host: string | null;
  unreadable: boolean;
}

/** A secret is never shown again: the field is empty, says whether one is stored and where it points, and can be replaced or removed. */
function SecretField({
  field,
  label,
  state,
  placeholder,
  canStore,
}: {
  field: FieldBinding;
  label: string;
  state: SecretState;
  placeholder: string;
  canStore: boolean;
}) {
  const hint = state.unreadable
    ? "The stored value cannot be read with this installation's key; enter it again."
    : state.source === "console"
      ? `Stored encrypted, points at ${state.host ?? "?"}. Leave empty to keep it.`
      : state.source === "environment"
        ? `The deployment sets one (${state.host ?? "?"}); a value here overrides it.`
        : canStore
          ? "Not set."
          : "Not set. Storing secrets here needs an encryption key set at deploy time.";
  return (
    <div>
      <Field label={label} {...field} hint={hint}>
        {(p) => (
          <input
            {...p}
            type="password"
            autoComplete="off"
            placeholder={state.source === "none" ? placeholder : "•••••••• (unchanged)"}
            disabled={!canStore}
          />
        )}
      </Field>
      {state.source === "console" ? (
        <label className="mt-1 flex items-center gap-2 text-xs text-slate-600">
          <input type="checkbox" name={`remove_${field.name}`} className="rounded border-slate-300" /> Remove the value stored here
          {state.source === "console" ? " (the deployment's applies, if any)" : ""}
        </label>
      ) : null}
    </div>
  );
}

export function NotificationSettingsForm({
  action,
  testAction,
  view,
}: {
  action: FormAction;
  testAction: FormAction<{ results: Array<{ channel: "email" | "webhook"; target: string; ok: boolean; error?: string }> }>;
  view: {
    encryption: boolean;
    smtp: SecretState;
    webhook: SecretState;
    emailFrom: { value: string; source: Source };
    emailTo: { value: string[]; source: Source };
  };
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const test = useActionForm(testAction, false);
  const f = formFields(state);
  return (
    <div>
      <form ref={formRef} action={dispatch} aria-label="Notification channels" className="grid gap-4 p-5 sm:grid-cols-2">
        <SecretField
          field={f.bare("smtp_url")}
          label="Email server (SMTP URL)"
          state={view.smtp}
          placeholder="smtp://user:password@mail.example.com:587"
          canStore={view.encryption}
        />
        <Field
          label="Send alerts from"
          {...f("email_from", view.emailFrom.value)}
          hint={`${SOURCE_LABEL[view.emailFrom.source]}; empty: the deployment's`}
        >
          {(p) => <input {...p} placeholder="GPUForge alerts <alerts@example.com>" />}
        </Field>
        <Field
          label="Send alerts to"
          {...f("email_to", view.emailTo.value.join(", "))}
          hint="Comma-separated; empty: every active operator"
        >
          {(p) => <input {...p} placeholder="oncall@example.com, noc@example.com" />}
        </Field>
        <SecretField
          field={f.bare("webhook_url")}
          label="Webhook (Slack-compatible)"
          state={view.webhook}
          placeholder="https://hooks.slack.com/services/…"
          canStore={view.encryption}
        />
        <div className="flex flex-wrap items-center gap-3 sm:col-span-2">
          <SubmitButton>Save channels</SubmitButton>
          <FormMessage state={state} />
        </div>
      </form>
      <form
        action={test.dispatch}
        aria-label="Send a test notification"
        className="flex flex-wrap items-center gap-3 border-t border-slate-100 px-5 py-4"
      >
        <SubmitButton variant="secondary">Send test</SubmitButton>
        <span className="text-sm text-slate-600">
          Sends a test message through every channel in force now, and shows what each answered.
        </span>
        <div className="w-full">
          <FormMessage state={test.state} />
        </div>
        {test.state.data?.results.length ? (
          <ul className="w-full space-y-1 text-sm" data-testid="test-results">
            {test.state.data.results.map((r) => (
              <li key={r.channel} className="flex flex-wrap items-center gap-2">
                <Badge tone={r.ok ? "green" : "red"}>{r.ok ? "delivered" : "failed"}</Badge>
                <span className="font-medium">{r.channel === "email" ? "Email" : "Webhook"}</span>
                <span className="text-slate-600">{r.target}</span>
                {r.error ? <span className="text-red-700">{r.error}</span> : null}
              </li>
            ))}
          </ul>
        ) : null}
      </form>
    </div>
  );
}

export function RemediationSettingsForm({
  action,
  cap,
  windowS,
  source,
}: {
  action: FormAction;
  cap: number;
  windowS: number;
  source: Source;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form ref={formRef} action={dispatch} aria-label="Automatic remediation" className="grid gap-4 p-5 sm:grid-cols-3 sm:items-start">
      <Field label="Most automatic quarantines" {...f("cap", cap)} hint="Fleet-wide; past it, a human is asked">
        {(p) => <input {...p} type="number" min={0} max={10000} required />}
      </Field>
      <Field label="Per window (seconds)" {...f("window_s", windowS)} hint={`${Math.round(windowS / 60)} min now`}>
        {(p) => <input {...p} type="number" min={60} max={604800} required />}
      </Field>
      <div className="flex flex-wrap items-center gap-3 sm:pt-6">
        <SubmitButton>Save cap</SubmitButton>
        {source === "console" ? (
          <SubmitButton variant="secondary" name="reset" value="1">
            Use the deployment&apos;s
          </SubmitButton>
        ) : null}
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function BankDetailsForm({
  action,
  bank,
}: {
  action: FormAction;
  bank: { account_name: string; iban?: string; bic?: string; bank_name?: string; instructions?: string } | null;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form ref={formRef} action={dispatch} aria-label="Bank details" className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4">
      <Field label="Account holder" {...f("account_name", bank?.account_name)}>
        {(p) => <input {...p} required placeholder="GPUForge Cloud Ltd" />}
      </Field>
      <Field label="IBAN or account number" {...f("iban", bank?.iban)}>
        {(p) => <input {...p} placeholder="DE89 3704 0044 0532 0130 00" />}
      </Field>
      <Field label="BIC / SWIFT" {...f("bic", bank?.bic)}>
        {(p) => <input {...p} placeholder="COBADEFFXXX" />}
      </Field>
      <Field label="Bank" {...f("bank_name", bank?.bank_name)}>
        {(p) => <input {...p} placeholder="Commerzbank" />}
      </Field>
      <div className="sm:col-span-2 lg:col-span-4">
        <Field
          label="Instructions for tenants"
          {...f("instructions", bank?.instructions)}
          hint="Shown with the details, e.g. how long a transfer takes to be recorded"
        >
          {(p) => <textarea {...p} rows={2} />}
        </Field>
      </div>
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Save bank details</SubmitButton>
        {bank ? (
          <SubmitButton variant="secondary" name="remove" value="1">
            Remove
          </SubmitButton>
        ) : null}
        <FormMessage state={state} />
      </div>
    </form>
  );
}
