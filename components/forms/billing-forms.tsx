"use client";
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { ConfirmedAction, type Confirmation } from "./confirmed-action";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

/** Sets a GPU type's price per GPU-hour (typed in dollars). */
export function SetRateForm({ action, gpuType }: { action: FormAction; gpuType?: string }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { paths: { price: "cents_per_hour" } });
  return (
    <form
      ref={formRef}
      action={dispatch}
      aria-label={gpuType ? `Set the ${gpuType} rate` : "Set a rate"}
      className="grid gap-3 p-5 sm:grid-cols-3 sm:items-start"
    >
      <Field label="GPU type" {...f("gpu_type", gpuType)} hint="* prices every type without its own rate">
        {(p) => <input {...p} required placeholder="H100" />}
      </Field>
      <Field label="Price per GPU-hour (USD)" {...f("price")} hint="Applies from now; past usage keeps its rate">
        {(p) => <input {...p} required inputMode="decimal" placeholder="2.49" />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton>Set rate</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** The last full calendar month (UTC) as the first and last day a date input shows. */
function lastFullMonthDays(now: Date): { first: string; last: string } {
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  return { first: day(start), last: day(end - 86_400_000) };
}

/** Generates an invoice for a tenant over whole UTC days (the last full month to start with). Opens it when created. */
export function GenerateInvoiceForm({
  action,
  tenantId,
  openBase,
}: {
  action: FormAction<{ id: string }>;
  tenantId: string;
  openBase: string;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const router = useRouter();
  useEffect(() => {
    if (state.ok && state.data?.id) router.push(`${openBase}/${state.data.id}`);
  }, [state, router, openBase]);
  // whole UTC days, the last included; it starts on the last full month, the default period
  const f = formFields(state, { paths: { first_day: "period.period_start", last_day: "period.period_end" } });
  const month = lastFullMonthDays(new Date());
  return (
    <form ref={formRef} action={dispatch} aria-label="Generate invoice" className="grid gap-3 p-5 sm:grid-cols-3 sm:items-start">
      <input type="hidden" name="tenant_id" value={tenantId} />
      <Field label="First day (UTC)" {...f("first_day", month.first)} hint="From 00:00 UTC">
        {(p) => <input {...p} type="date" required />}
      </Field>
      <Field label="Last day (UTC)" {...f("last_day", month.last)} hint="Up to 24:00 UTC; usage already invoiced is never billed again">
        {(p) => <input {...p} type="date" required />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton>Generate invoice</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** Credits a tenant's prepaid balance (operators). */
export function DepositForm({ action, tenantId }: { action: FormAction; tenantId: string }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { under: "deposit", paths: { amount: "deposit.amount_cents" } });
  return (
    <form ref={formRef} action={dispatch} aria-label="Record deposit" className="grid gap-3 p-5 sm:grid-cols-3 sm:items-start">
      <input type="hidden" name="tenant_id" value={tenantId} />
      <Field label="Amount (USD)" {...f("amount")}>
        {(p) => <input {...p} required inputMode="decimal" placeholder="500.00" />}
      </Field>
      <Field label="Note" {...f("description")}>
        {(p) => <input {...p} placeholder="Wire 2026-11-28" maxLength={200} />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton>Record deposit</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** Records a bank transfer against a pending invoice (operators). */
export function BankPaymentForm({ action, invoiceId }: { action: FormAction; invoiceId: string }) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form ref={formRef} action={dispatch} aria-label="Record bank payment" className="flex flex-wrap items-end gap-3">
      <input type="hidden" name="id" value={invoiceId} />
      <div className="min-w-64 flex-1">
        <Field label="Bank transfer reference" {...f("reference")}>
          {(p) => <input {...p} placeholder="e.g. SEPA ref 2026-11-30-0042" maxLength={200} />}
        </Field>
      </div>
      <SubmitButton variant="secondary">Record bank payment</SubmitButton>
      <div className="w-full">
        <FormMessage state={state} />
      </div>
    </form>
  );
}

/** One-click actions with a visible outcome: pay from balance, void (which asks first). */
export function InvoiceButton({
  action,
  invoiceId,
  label,
  variant = "primary",
  confirm,
}: {
  action: FormAction;
  invoiceId: string;
  label: string;
  variant?: "primary" | "secondary" | "danger";
  confirm?: Confirmation;
}) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id: invoiceId }}
      label={label}
      variant={variant}
      size="md"
      showSuccess
      confirm={confirm ?? null}
      className="gap-3"
    />
  );
}

/** Switches a tenant between invoicing and a prepaid balance. */
export function BillingModeForm({ action, tenantId, mode }: { action: FormAction; tenantId: string; mode: string }) {
  const { state, dispatch } = useActionForm(action, false);
  const next = mode === "prepaid" ? "invoice" : "prepaid";
  return (
    <form action={dispatch} className="flex flex-wrap items-center gap-3">
      <input type="hidden" name="id" value={tenantId} />
      <input type="hidden" name="billing_mode" value={next} />
      <SubmitButton variant="secondary" size="sm">
        {next === "prepaid" ? "Switch to prepaid balance" : "Switch to monthly invoices"}
      </SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}

/** A tenant adds funds by card: the action answers with Stripe Checkout's address and the browser goes there. */
/** Pays an invoice by card: the action answers with its open Stripe Checkout (a new one when the last expired) and the browser goes there. */
export function PayByCardButton({
  action,
  invoiceId,
  variant = "primary",
}: {
  action: FormAction<{ url: string }>;
  invoiceId: string;
  variant?: "primary" | "secondary";
}) {
  const { state, dispatch } = useActionForm(action, false);
  useEffect(() => {
    if (state.ok && state.data?.url) window.location.assign(state.data.url);
  }, [state]);
  return (
    <form action={dispatch} className="flex flex-wrap items-center gap-3" aria-label="Pay by card">
      <input type="hidden" name="id" value={invoiceId} />
      <SubmitButton variant={variant}>Pay by card</SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}

/** Refunds part or all of a paid invoice to the tenant's balance (operators). */
export function RefundForm({ action, invoiceId }: { action: FormAction; invoiceId: string }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state, { under: "refund", paths: { amount: "refund.amount_cents" } });
  return (
    <form ref={formRef} action={dispatch} aria-label="Refund" className="grid gap-3 sm:grid-cols-3 sm:items-start">
      <input type="hidden" name="id" value={invoiceId} />
      <Field label="Amount (USD)" {...f("amount")}>
        {(p) => <input {...p} required inputMode="decimal" placeholder="12.00" />}
      </Field>
      <Field label="Reason (the tenant reads it)" {...f("reason")}>
        {(p) => <input {...p} required maxLength={200} placeholder="SLA credit" />}
      </Field>
      <div className="sm:pt-6">
        <SubmitButton variant="secondary">Refund to balance</SubmitButton>
      </div>
      <div className="sm:col-span-3">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
