"use client";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

export function CreateClusterForm({ action }: { action: FormAction }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const e = state.fieldErrors ?? {};
  const v = state.values ?? {};
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4 lg:items-start" aria-label="Register cluster">
      <Field label="Name" name="name" error={e.name}>{(p) => <input {...p} key={`n${state.at}`} defaultValue={v.name} required placeholder="us-east-h100" />}</Field>
      <Field label="Region" name="region" error={e.region}>{(p) => <input {...p} key={`r${state.at}`} defaultValue={v.region} placeholder="us-east-1" />}</Field>
      <Field label="Provider" name="provider" error={e.provider}>{(p) => <input {...p} key={`p${state.at}`} defaultValue={v.provider} placeholder="on-prem, CoreWeave…" />}</Field>
      <div className="lg:pt-6"><SubmitButton>Register cluster</SubmitButton></div>
      <div className="sm:col-span-2 lg:col-span-4"><FormMessage state={state} /></div>
    </form>
  );
}
