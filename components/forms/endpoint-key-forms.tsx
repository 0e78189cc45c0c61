"use client";
import { CopyLine } from "@/components/ui/copy-line";
import { ConfirmedAction } from "./confirmed-action";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

/** Creates a key for one endpoint; the key itself is shown once, here. */
export function CreateEndpointKeyForm({ action, endpointId }: { action: FormAction<{ key: string; prefix: string }>; endpointId: string }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  const created = state.ok ? state.data : undefined;
  return (
    <div>
      <form ref={formRef} action={dispatch} className="flex flex-wrap items-end gap-3 p-5" aria-label="Create endpoint key">
        <input type="hidden" name="endpoint_id" value={endpointId} />
        <div className="min-w-64">
          <Field label="Key name" {...f("name")} hint="Where it is used, e.g. chat-frontend">
            {(p) => <input {...p} required maxLength={100} placeholder="chat-frontend" />}
          </Field>
        </div>
        <div className="pb-5">
          <SubmitButton>Create key</SubmitButton>
        </div>
        {!created ? (
          <div className="w-full">
            <FormMessage state={state} />
          </div>
        ) : null}
      </form>
      {created ? (
        <div role="status" className="mx-5 mb-5 rounded-lg border border-amber-200 bg-amber-50 p-4">
          <p className="mb-3 text-sm font-medium text-amber-900">{state.message}</p>
          <CopyLine text={created.key} label="New endpoint key" />
        </div>
      ) : null}
    </div>
  );
}

export function RevokeEndpointKeyButton({
  action,
  endpointId,
  id,
  prefix,
}: {
  action: FormAction;
  endpointId: string;
  id: string;
  prefix: string;
}) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ endpoint_id: endpointId, id }}
      label="Revoke"
      confirm={{
        title: `Revoke ${prefix}…?`,
        body: "Callers using it are refused from their next request.",
        confirmLabel: "Revoke key",
        keepLabel: "Keep key",
      }}
    />
  );
}
