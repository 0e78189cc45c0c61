"use client";
import { ConfirmedAction } from "@/components/forms/confirmed-action";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";

export function CancelPipelineButton({ action, id, name }: { action: FormAction; id: string; name: string }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id }}
      label="Cancel pipeline"
      confirm={{
        title: `Cancel “${name}”?`,
        body: "Its running jobs are cancelled and its waiting steps skipped.",
        confirmLabel: "Cancel pipeline",
        keepLabel: "Keep running",
      }}
    />
  );
}

export function RetryStepButton({ action, id, step }: { action: FormAction; id: string; step: string }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} className="inline-flex items-center gap-2">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="step" value={step} />
      <SubmitButton variant="secondary" size="sm">
        Retry {step}
      </SubmitButton>
      {state.message && !state.ok ? (
        <span role="status" className="text-xs text-red-600">
          {state.message}
        </span>
      ) : null}
    </form>
  );
}

export function SecretForm({ action }: { action: FormAction }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { idPrefix: "secret" });
  return (
    <form ref={formRef} action={dispatch} aria-label="Add a secret" className="grid gap-3 p-5 sm:grid-cols-[1fr_2fr_1fr_auto] sm:items-end">
      <Field label="Name" {...f("name")} hint="e.g. EVAL_TOKEN">
        {(p) => <input {...p} required maxLength={64} pattern="[A-Z][A-Z0-9_]*" placeholder="EVAL_TOKEN" autoComplete="off" />}
      </Field>
      <Field label="Value" {...f.bare("value")} hint="Stored encrypted; never shown again">
        {(p) => <input {...p} type="password" required maxLength={8192} autoComplete="new-password" />}
      </Field>
      <Field label="Who may use it" {...f("usable_by", "tenant_admin")} hint="In the pipelines they start">
        {(p) => (
          <select {...p}>
            <option value="tenant_admin">Admins only</option>
            <option value="tenant_member">Every member</option>
          </select>
        )}
      </Field>
      <div className="flex items-center gap-3 sm:pb-5">
        <SubmitButton>Save secret</SubmitButton>
      </div>
      <div className="sm:col-span-4">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function DeleteSecretButton({ action, name }: { action: FormAction; name: string }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ name }}
      label="Delete"
      confirm={{
        title: `Delete secret ${name}?`,
        body: "Steps that use it fail when they call. Its value cannot be recovered.",
        confirmLabel: "Delete secret",
        keepLabel: "Keep secret",
      }}
    />
  );
}
