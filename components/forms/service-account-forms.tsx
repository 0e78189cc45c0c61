"use client";
import { useState } from "react";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

interface Option {
  id: string;
  name: string;
}

/** A service account: the owner of keys that must outlive any one person. Tenant admins name it and its role; operators also its tenant. */
export function CreateServiceAccountForm({ action, tenants }: { action: FormAction; tenants?: Option[] }) {
  const { state, dispatch, formRef } = useActionForm(action);
  // beside the key form on one page: ids of its own
  const f = formFields(state, { idPrefix: "sa" });
  const operatorPlane = tenants !== undefined;
  // least privilege first
  const [role, setRole] = useState("tenant_member");
  return (
    <form
      ref={formRef}
      action={dispatch}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4 lg:items-start"
      aria-label="Create service account"
    >
      <Field label="Name" {...f("name")} hint="What uses its keys, e.g. ci-deployer">
        {(p) => <input {...p} required maxLength={100} placeholder="ci-deployer" />}
      </Field>
      <Field label="Role" {...f.bare("role")} hint="What its keys may do at most">
        {(p) => (
          <select {...p} value={role} onChange={(ev) => setRole(ev.target.value)}>
            <option value="tenant_member">{operatorPlane ? "Tenant member — runs a tenant's work" : "Member — runs work"}</option>
            <option value="tenant_admin">{operatorPlane ? "Tenant admin — all of one tenant" : "Admin — all of it, keys too"}</option>
            {operatorPlane ? <option value="operator">Operator — the whole platform</option> : null}
          </select>
        )}
      </Field>
      {operatorPlane && role !== "operator" ? (
        <Field label="Tenant" {...f("tenant_id")}>
          {(p) => (
            <select {...p} required>
              {tenants!.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <Field label="Description" {...f("description")} hint="Optional: who looks after it">
        {(p) => <input {...p} maxLength={500} placeholder="Deploys endpoints from CI; platform team" />}
      </Field>
      <div className="lg:pt-6">
        <SubmitButton>Create service account</SubmitButton>
      </div>
      <div className="sm:col-span-2 lg:col-span-4">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function DisableServiceAccountButton({ action, id, name, keys }: { action: FormAction; id: string; name: string; keys: number }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form
      action={dispatch}
      onSubmit={(ev) => {
        const what = keys === 1 ? "its key stops" : `its ${keys} keys stop`;
        if (
          !confirm(`Disable ${name}? ${keys ? what : "Nothing it owns stops, as it has no keys in use; it"} working immediately, for good.`)
        )
          ev.preventDefault();
      }}
      className="inline-flex items-center gap-2"
    >
      <input type="hidden" name="id" value={id} />
      <SubmitButton variant="danger" size="sm">
        Disable
      </SubmitButton>
      {state.message && !state.ok ? (
        <span role="status" className="text-xs text-red-600">
          {state.message}
        </span>
      ) : null}
    </form>
  );
}
