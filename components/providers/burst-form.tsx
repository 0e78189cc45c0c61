"use client";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";

/**
 * A tenant's burst setting: on or off, and the most it pays per GPU-hour on provider capacity (in
 * dollars here, cents in the API). Read-only for those who may not change it (a tenant member, or
 * a tenant admin the operator has not allowed burst). An operator also sets the allowance.
 */
export function BurstForm({
  action,
  tenantId,
  enabled,
  maxPriceCents,
  canEdit,
  allowed,
  operator = false,
}: {
  action: FormAction;
  tenantId: string;
  enabled: boolean;
  maxPriceCents: number | null;
  canEdit: boolean;
  /** whether the operator lets the tenant's admin turn burst on */
  allowed: boolean;
  /** the operator's form: it also sets the allowance */
  operator?: boolean;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, {
    paths: { enabled: "burst.enabled", allowed: "burst.allowed", max_price: "burst.max_price_cents_per_gpu_hour" },
  });
  const price = maxPriceCents === null ? "" : (maxPriceCents / 100).toFixed(2);
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-3 sm:items-start" aria-label="Burst to GPU providers">
      <input type="hidden" name="id" value={tenantId} />
      <div className="flex items-start gap-3 sm:pt-7">
        <input
          key={`${f.key}-enabled`}
          id="burst-enabled"
          name="enabled"
          type="checkbox"
          defaultChecked={f.checked("enabled", enabled)}
          disabled={!canEdit}
          className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus-visible:ring-2 focus-visible:ring-indigo-600"
        />
        <label htmlFor="burst-enabled" className="text-sm text-slate-800">
          <span className="font-medium">Burst to GPU providers</span>
          <span className="block text-xs text-slate-500">Jobs that wait for capacity run on rented capacity instead.</span>
        </label>
      </div>
      {operator ? (
        <div className="flex items-start gap-3 sm:col-span-3">
          <input type="hidden" name="allowed_field" value="1" />
          <input
            key={`${f.key}-allowed`}
            id="burst-allowed"
            name="allowed"
            type="checkbox"
            defaultChecked={f.checked("allowed", allowed)}
            className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus-visible:ring-2 focus-visible:ring-indigo-600"
          />
          <label htmlFor="burst-allowed" className="text-sm text-slate-800">
            <span className="font-medium">Allow the tenant&apos;s admins to turn burst on</span>
            <span className="block text-xs text-slate-500">
              Turning burst on here allows it; withdrawing the allowance turns burst off.
            </span>
          </label>
        </div>
      ) : null}
      <Field
        label="Price cap per GPU-hour (USD)"
        {...f("max_price", price)}
        hint="The most a job pays there; our price, billed on your invoice"
      >
        {(p) => <input {...p} inputMode="decimal" placeholder="4.50" disabled={!canEdit} />}
      </Field>
      <div className="flex flex-col gap-2 sm:pt-6">
        {canEdit ? (
          <SubmitButton>Save burst setting</SubmitButton>
        ) : (
          <p className="text-xs text-slate-500">
            {allowed ? "Only an admin of your organisation changes this." : "Your operator has not allowed burst for your organisation."}
          </p>
        )}
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
