"use client";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";

export function RefreshOffersButton({ action }: { action: FormAction }) {
  const { state, dispatch, formRef } = useActionForm(action);
  return (
    <form ref={formRef} action={dispatch} className="flex items-center gap-3" aria-label="Refresh offers">
      <SubmitButton variant="secondary" size="sm">
        Refresh offers now
      </SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}

/** The operator's word on one provider GPU name: our type, or empty for "never use it". */
export function GpuMappingForm({
  action,
  provider,
  providerGpuType,
  gpuType,
  idPrefix,
}: {
  action: FormAction;
  provider: string;
  providerGpuType: string;
  gpuType: string | null;
  idPrefix: string;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { idPrefix });
  return (
    <form ref={formRef} action={dispatch} className="flex flex-wrap items-end gap-2" aria-label={`Map ${providerGpuType}`}>
      <input type="hidden" name="provider" value={provider} />
      <input type="hidden" name="provider_gpu_type" value={providerGpuType} />
      <div className="w-36">
        <Field label="Our GPU type" {...f("gpu_type", gpuType ?? "")} idPrefix={idPrefix}>
          {(p) => <input {...p} placeholder="never" maxLength={64} />}
        </Field>
      </div>
      <SubmitButton size="sm" variant="secondary">
        Save
      </SubmitButton>
      <div className="basis-full">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
