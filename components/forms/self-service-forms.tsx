"use client";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

interface Defaults {
  gpu_quota: number;
  max_priority: number;
  burst_enabled: boolean;
  burst_max_price_cents_per_gpu_hour: number | null;
  max_pods: number | null;
  max_reservation_hours: number | null;
  max_reservations: number | null;
}

const checkbox = "h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-600";

/** Settings → Self-service: sign-up on or off, and what each sign-up starts with. */
export function SelfServiceSettingsForm({ action, enabled, defaults }: { action: FormAction; enabled: boolean; defaults: Defaults }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state, { under: "defaults", paths: { burst_price: "defaults.burst_max_price_cents_per_gpu_hour" } });
  const price = defaults.burst_max_price_cents_per_gpu_hour;
  return (
    <form action={dispatch} aria-label="Self-service sign-up" className="space-y-5 p-5">
      <label className="flex items-center gap-3 text-sm font-medium text-slate-900">
        <input type="checkbox" name="enabled" defaultChecked={f.checked("enabled", enabled)} className={checkbox} key={`e-${f.key}`} />
        Strangers may sign up on their own (a prepaid account, usable once its email address is confirmed)
      </label>
      <fieldset>
        <legend className="mb-3 text-sm font-semibold text-slate-900">A new sign-up starts with</legend>
        <div className="grid gap-4 sm:grid-cols-3">
          <Field label="GPU quota" {...f("gpu_quota", defaults.gpu_quota)} hint="GPUs it may hold at once">
            {(p) => <input {...p} required inputMode="numeric" />}
          </Field>
          <Field
            label="Best priority"
            {...f("max_priority", defaults.max_priority)}
            hint="1 is the highest; 5 keeps it behind your own tenants"
          >
            {(p) => <input {...p} required inputMode="numeric" />}
          </Field>
          <Field label="Pods at once" {...f("max_pods", defaults.max_pods)} hint="Empty: no limit">
            {(p) => <input {...p} inputMode="numeric" />}
          </Field>
          <Field label="Longest reservation (hours)" {...f("max_reservation_hours", defaults.max_reservation_hours)} hint="Empty: no limit">
            {(p) => <input {...p} inputMode="numeric" />}
          </Field>
          <Field label="Reservations at once" {...f("max_reservations", defaults.max_reservations)} hint="Empty: no limit">
            {(p) => <input {...p} inputMode="numeric" />}
          </Field>
          <Field
            label="Burst price cap (USD per GPU-hour)"
            {...f("burst_price", price === null ? null : (price / 100).toFixed(2))}
            hint="Needed to let sign-ups burst to providers"
          >
            {(p) => <input {...p} inputMode="decimal" placeholder="4.00" />}
          </Field>
        </div>
        <label className="mt-4 flex items-center gap-3 text-sm text-slate-800">
          <input
            type="checkbox"
            name="burst_enabled"
            defaultChecked={f.checked("burst_enabled", defaults.burst_enabled)}
            className={checkbox}
            key={`b-${f.key}`}
          />
          New sign-ups may burst to GPU providers when the fleet is full (up to the cap)
        </label>
      </fieldset>
      <p className="text-xs text-slate-500">
        Raise a tenant&apos;s own limits on its page. Existing tenants keep theirs when you change these.
      </p>
      <FormMessage state={state} />
      <SubmitButton>Save self-service settings</SubmitButton>
    </form>
  );
}

/** Settings → Sign-in security: who must use two-factor sign-in. */
export function TwoFactorPolicyForm({ action, policy }: { action: FormAction; policy: { operators: boolean; tenant_admins: boolean } }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form action={dispatch} aria-label="Two-factor requirement" className="space-y-3 p-5">
      <label className="flex items-center gap-3 text-sm text-slate-800">
        <input
          type="checkbox"
          name="operators"
          defaultChecked={f.checked("operators", policy.operators)}
          className={checkbox}
          key={`o-${f.key}`}
        />
        Operators must sign in with two-factor authentication
      </label>
      <label className="flex items-center gap-3 text-sm text-slate-800">
        <input
          type="checkbox"
          name="tenant_admins"
          defaultChecked={f.checked("tenant_admins", policy.tenant_admins)}
          className={checkbox}
          key={`t-${f.key}`}
        />
        Tenant admins must sign in with two-factor authentication
      </label>
      <p className="text-xs text-slate-500">
        Those without it are asked to set it up at their next page, and can do nothing else until they have.
      </p>
      <FormMessage state={state} />
      <SubmitButton variant="secondary">Save requirement</SubmitButton>
    </form>
  );
}

/** A tenant's limits on its page (operators): empty is no limit. */
export function TenantLimitsForm({
  action,
  tenantId,
  limits,
}: {
  action: FormAction;
  tenantId: string;
  limits: { max_pods: number | null; max_reservation_hours: number | null; max_reservations: number | null };
}) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state, { under: "limits", idPrefix: "lim" });
  return (
    <form action={dispatch} aria-label="Limits" className="grid gap-3 p-5 sm:grid-cols-4 sm:items-start">
      <input type="hidden" name="id" value={tenantId} />
      <Field label="Pods at once" {...f("max_pods", limits.max_pods)} hint="Empty: no limit">
        {(p) => <input {...p} inputMode="numeric" />}
      </Field>
      <Field label="Longest reservation (hours)" {...f("max_reservation_hours", limits.max_reservation_hours)} hint="Empty: no limit">
        {(p) => <input {...p} inputMode="numeric" />}
      </Field>
      <Field label="Reservations at once" {...f("max_reservations", limits.max_reservations)} hint="Empty: no limit">
        {(p) => <input {...p} inputMode="numeric" />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton variant="secondary">Save limits</SubmitButton>
      </div>
      <div className="sm:col-span-4">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
