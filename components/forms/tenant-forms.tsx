"use client";
import { useState } from "react";
import { quotaWarning } from "@/lib/jobs/job-fit";
import { ConfirmedAction } from "./confirmed-action";
import { formFields, type FieldBinding } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

/** The quota input, warning as it is typed when no fleet of this size can fill the quota. */
function QuotaField({ field, fleetGpus, hint }: { field: FieldBinding; fleetGpus: number; hint?: string }) {
  // the value lives in state here (the warning follows it): the binding's start seeds it, and the
  // form remounts this component with each answer
  const { defaultValue, at: _at, ...binding } = field;
  const [value, setValue] = useState(defaultValue ?? "");
  const warning = value.trim() !== "" && Number.isFinite(Number(value)) ? quotaWarning(Number(value), fleetGpus) : null;
  return (
    <div>
      <Field
        label="GPU quota"
        {...binding}
        hint={hint ?? `Most GPUs it may hold at once; the fleet has ${fleetGpus.toLocaleString("en-US")}`}
      >
        {(p) => (
          <input
            {...p}
            value={value}
            onChange={(ev) => setValue(ev.target.value)}
            type="number"
            min={0}
            required
            inputMode="numeric"
            placeholder="64"
          />
        )}
      </Field>
      {warning ? (
        <p data-testid="quota-warning" role="status" className="mt-1 text-xs text-amber-800">
          {warning}
        </p>
      ) : null}
    </div>
  );
}

export function CreateTenantForm({ action, fleetGpus }: { action: FormAction; fleetGpus: number }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  return (
    <form
      ref={formRef}
      action={dispatch}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4 lg:items-start"
      aria-label="Create tenant"
    >
      <Field label="Name" {...f("name")}>
        {(p) => <input {...p} required maxLength={100} placeholder="Acme Research" />}
      </Field>
      <QuotaField key={f.key} field={f("gpu_quota")} fleetGpus={fleetGpus} />
      <Field label="Billing email" {...f("billing_email")}>
        {(p) => <input {...p} type="email" placeholder="finance@acme.example" />}
      </Field>
      <div className="flex flex-col gap-2 lg:pt-6">
        <SubmitButton>Create tenant</SubmitButton>
      </div>
      <div className="sm:col-span-2 lg:col-span-4">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function EditTenantForm({
  action,
  tenant,
  fleetGpus,
}: {
  action: FormAction;
  tenant: { id: string; name: string; gpuQuota: number; billingEmail: string | null; maxPriority: number };
  fleetGpus: number;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { under: "changes" });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-3" aria-label="Edit tenant">
      <input type="hidden" name="id" value={tenant.id} />
      <Field label="Name" {...f("name", tenant.name)}>
        {(p) => <input {...p} required />}
      </Field>
      <QuotaField key={f.key} field={f("gpu_quota", tenant.gpuQuota)} fleetGpus={fleetGpus} />
      <Field label="Billing email" {...f("billing_email", tenant.billingEmail)}>
        {(p) => <input {...p} type="email" />}
      </Field>
      <Field label="Highest allowed priority" {...f("max_priority", tenant.maxPriority)} hint="1 allows any; 3 allows 3 to 10">
        {(p) => <input {...p} type="number" min={1} max={10} required />}
      </Field>
      <div className="flex items-center gap-3 sm:col-span-3">
        <SubmitButton>Save changes</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function TenantStatusForm({ action, tenant }: { action: FormAction; tenant: { id: string; name: string; status: string } }) {
  const suspend = tenant.status === "active";
  return (
    <ConfirmedAction
      action={action}
      fields={{ id: tenant.id, status: suspend ? "suspended" : "active" }}
      label={suspend ? "Suspend tenant" : "Reactivate tenant"}
      variant={suspend ? "danger" : "secondary"}
      size="md"
      showSuccess
      confirm={
        suspend
          ? {
              title: `Suspend ${tenant.name}?`,
              body: "Its users and API keys stop working immediately, its running work stops and its waiting work is held until it is reactivated.",
              confirmLabel: "Suspend tenant",
              keepLabel: "Keep active",
            }
          : null
      }
    />
  );
}
