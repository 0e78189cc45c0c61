"use client";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

export function CreateUserForm({
  action,
  tenantId,
  allowOperator = false,
}: {
  action: FormAction;
  tenantId?: string;
  allowOperator?: boolean;
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2" aria-label="Add user">
      {tenantId ? <input type="hidden" name="tenant_id" value={tenantId} /> : null}
      <Field label="Name" {...f("name")}>
        {(p) => <input {...p} required autoComplete="off" />}
      </Field>
      <Field label="Email" {...f("email")}>
        {(p) => <input {...p} type="email" required autoComplete="off" />}
      </Field>
      <Field label="Initial password" {...f.bare("password")} hint="12+ characters; share it privately">
        {(p) => <input {...p} type="password" required minLength={12} autoComplete="new-password" />}
      </Field>
      <Field label="Role" {...f("role", "tenant_member")}>
        {(p) => (
          <select {...p}>
            <option value="tenant_member">Member — submits and watches work</option>
            <option value="tenant_admin">Admin — also manages users and keys</option>
            {allowOperator ? <option value="operator">Operator</option> : null}
          </select>
        )}
      </Field>
      <div className="flex items-center gap-3 sm:col-span-2">
        <SubmitButton>Add user</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function UserRowActions({
  action,
  user,
  isSelf,
}: {
  action: FormAction;
  user: { id: string; name: string; role: string; disabled: boolean };
  isSelf: boolean;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  if (isSelf) return <span className="text-xs text-slate-500">You</span>;
  return (
    <div className="flex items-center justify-end gap-2">
      {user.role !== "operator" ? (
        <form ref={formRef} action={dispatch}>
          <input type="hidden" name="id" value={user.id} />
          <input type="hidden" name="role" value={user.role === "tenant_admin" ? "tenant_member" : "tenant_admin"} />
          <SubmitButton variant="secondary" size="sm">
            {user.role === "tenant_admin" ? "Make member" : "Make admin"}
          </SubmitButton>
        </form>
      ) : null}
      <form action={dispatch}>
        <input type="hidden" name="id" value={user.id} />
        <input type="hidden" name="disabled" value={user.disabled ? "false" : "true"} />
        <SubmitButton variant={user.disabled ? "secondary" : "danger"} size="sm">
          {user.disabled ? "Enable" : "Disable"}
        </SubmitButton>
      </form>
      {state.message && !state.ok ? (
        <span role="status" className="text-xs text-red-600">
          {state.message}
        </span>
      ) : null}
    </div>
  );
}
