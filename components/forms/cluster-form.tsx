"use client";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

export function CreateClusterForm({ action }: { action: FormAction }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  return (
    <form
      ref={formRef}
      action={dispatch}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-5 lg:items-start"
      aria-label="Register cluster"
    >
      <Field label="Name" {...f("name")}>
        {(p) => <input {...p} required placeholder="us-east-h100" />}
      </Field>
      <Field label="Region" {...f("region")}>
        {(p) => <input {...p} placeholder="us-east-1" />}
      </Field>
      <Field label="Provider" {...f("provider")}>
        {(p) => <input {...p} placeholder="on-prem, CoreWeave…" />}
      </Field>
      <Field label="Run by" {...f("kind")} hint="Node agents on each GPU node, or one Slurm bridge for a whole Slurm cluster">
        {(p) => (
          <select {...p} defaultValue="gpu">
            <option value="gpu">Node agents</option>
            <option value="slurm">Slurm bridge</option>
          </select>
        )}
      </Field>
      <div className="lg:pt-6">
        <SubmitButton>Register cluster</SubmitButton>
      </div>
      <div className="sm:col-span-2 lg:col-span-5">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
