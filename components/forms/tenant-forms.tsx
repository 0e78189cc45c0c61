"use client";
import { useState } from "react";
import { quotaWarning } from "@/lib/jobs/job-fit";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

/** The quota input, warning as it is typed when no fleet of this size can fill the quota. */
function QuotaField({ error, initial, fleetGpus, hint }: { error?: string; initial: string; fleetGpus: number; hint?: string }) {
  const [value, setValue] = useState(initial);
  const warning = value.trim() !== "" && Number.isFinite(Number(value)) ? quotaWarning(Number(value), fleetGpus) : null;
  return (
    <div>
      <Field label="GPU quota" name="gpu_quota" error={error} hint={hint ?? `Most GPUs it may hold at once; the fleet has ${fleetGpus.toLocaleString("en-US")}`}>
        {(p) => <input {...p} value={value} onChange={(ev) => setValue(ev.target.value)} type="number" min={0} required inputMode="numeric" placeholder="64" />}
      </Field>
      {warning ? <p data-testid="quota-warning" role="status" className="mt-1 text-xs text-amber-800">{warning}</p> : null}
    </div>
  );
}

export function CreateTenantForm({ action, fleetGpus }: { action: FormAction; fleetGpus: number }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const e = state.fieldErrors ?? {};
  const v = state.values ?? {};
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4 lg:items-start" aria-label="Create tenant">
      <Field label="Name" name="name" error={e.name}>{(p) => <input {...p} key={`n${state.at}`} defaultValue={v.name} required maxLength={100} placeholder="Acme Research" />}</Field>
      <QuotaField key={`q${state.at}`} error={e.gpu_quota} initial={v.gpu_quota ?? ""} fleetGpus={fleetGpus} />
      <Field label="Billing email" name="billing_email" error={e.billing_email}>
        {(p) => <input {...p} key={`b${state.at}`} defaultValue={v.billing_email} type="email" placeholder="finance@acme.example" />}
      </Field>
      <div className="flex flex-col gap-2 lg:pt-6">
        <SubmitButton>Create tenant</SubmitButton>
      </div>
      <div className="sm:col-span-2 lg:col-span-4"><FormMessage state={state} /></div>
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
  const e = state.fieldErrors ?? {};
  const v = state.ok ? {} : (state.values ?? {});
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-3" aria-label="Edit tenant">
      <input type="hidden" name="id" value={tenant.id} />
      <Field label="Name" name="name" error={e["changes.name"]}>{(p) => <input {...p} key={`n${state.at}`} defaultValue={v.name ?? tenant.name} required />}</Field>
      <QuotaField key={`q${state.at}`} error={e["changes.gpu_quota"]} initial={v.gpu_quota ?? String(tenant.gpuQuota)} fleetGpus={fleetGpus} />
      <Field label="Billing email" name="billing_email" error={e["changes.billing_email"]}>
        {(p) => <input {...p} key={`b${state.at}`} type="email" defaultValue={v.billing_email ?? tenant.billingEmail ?? ""} />}
      </Field>
      <Field label="Highest allowed priority" name="max_priority" error={e["changes.max_priority"]} hint="1 allows any; 3 allows 3 to 10">
        {(p) => <input {...p} key={`p${state.at}`} type="number" min={1} max={10} defaultValue={v.max_priority ?? tenant.maxPriority} required />}
      </Field>
      <div className="flex items-center gap-3 sm:col-span-3">
        <SubmitButton>Save changes</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function TenantStatusForm({ action, tenant }: { action: FormAction; tenant: { id: string; name: string; status: string } }) {
  const { state, dispatch } = useActionForm(action, false);
  const suspend = tenant.status === "active";
  return (
    <form
      action={dispatch}
      onSubmit={(ev) => {
        if (suspend && !confirm(`Suspend ${tenant.name}? Its users and API keys stop working immediately.`)) ev.preventDefault();
      }}
      className="flex flex-wrap items-center gap-3"
    >
      <input type="hidden" name="id" value={tenant.id} />
      <input type="hidden" name="status" value={suspend ? "suspended" : "active"} />
      <SubmitButton variant={suspend ? "danger" : "secondary"}>{suspend ? "Suspend tenant" : "Reactivate tenant"}</SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}
