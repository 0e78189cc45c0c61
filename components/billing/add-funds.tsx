"use client";
import { useEffect, useState } from "react";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";

/**
 * The prepaid "Add funds" action: an amount (quick picks or typed) within the installation's
 * limits, then Stripe Checkout in this tab. The balance changes when Stripe confirms the payment.
 */
export function AddFundsByCard({
  action,
  minCents,
  maxCents,
  currency,
}: {
  action: FormAction<{ url: string }>;
  minCents: number;
  maxCents: number;
  currency: string;
}) {
  const { state, dispatch } = useActionForm(action, false);
  const [amount, setAmount] = useState("");
  useEffect(() => {
    if (state.ok && state.data?.url) window.location.assign(state.data.url);
  }, [state]);
  const f = formFields(state, { paths: { amount: "amount_cents" } });
  const money = (c: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(c / 100);
  const picks = [2_500, 10_000, 50_000].filter((c) => c >= minCents && c <= maxCents);
  return (
    <form action={dispatch} aria-label="Add funds by card" className="space-y-4 p-5">
      {picks.length ? (
        <div role="group" aria-label="Amount" className="flex flex-wrap gap-2">
          {picks.map((c) => (
            <button
              key={c}
              type="button"
              aria-pressed={amount === (c / 100).toFixed(2)}
              onClick={() => setAmount((c / 100).toFixed(2))}
              className="rounded-md px-3 py-1.5 text-sm font-medium ring-1 ring-slate-300 hover:bg-slate-50 aria-pressed:bg-indigo-50 aria-pressed:text-indigo-800 aria-pressed:ring-indigo-400"
            >
              {money(c)}
            </button>
          ))}
        </div>
      ) : null}
      <div className="flex flex-wrap items-end gap-3">
        <div className="min-w-48">
          <Field
            label={`Amount (${currency.toUpperCase()})`}
            {...f.bare("amount")}
            hint={`${money(minCents)} to ${money(maxCents)} a payment`}
          >
            {(p) => (
              <input {...p} required inputMode="decimal" placeholder="250.00" value={amount} onChange={(e) => setAmount(e.target.value)} />
            )}
          </Field>
        </div>
        <SubmitButton>Pay by card</SubmitButton>
      </div>
      <p className="text-xs text-slate-500">
        You pay on Stripe&apos;s page; the funds appear here, with a receipt by email, as soon as Stripe confirms the payment.
      </p>
      <FormMessage state={state} />
    </form>
  );
}
