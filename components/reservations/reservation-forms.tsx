"use client";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { estimateCents, formatCents, formatDuration } from "@/lib/billing/money";
import { ConfirmedAction } from "@/components/forms/confirmed-action";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, useLiveField, type FormAction } from "@/components/forms/use-action-form";

// Times are typed in UTC, like every time the console shows (a datetime-local input carries no
// zone), and sent as ISO-8601 instants, so the server never guesses a zone.

const toUtcInput = (iso: string) => new Date(iso).toISOString().slice(0, 16);

/** Copies each datetime-local input into its hidden ISO twin just before the form is sent. */
function stampInstants(form: HTMLFormElement) {
  for (const input of form.querySelectorAll<HTMLInputElement>("input[data-instant-for]")) {
    const local = form.querySelector<HTMLInputElement>(`#${input.dataset.instantFor}`);
    const at = local?.value ? new Date(`${local.value}Z`) : null;
    input.value = at && !Number.isNaN(at.getTime()) ? at.toISOString() : "";
  }
}

/** What a booking was sent with, as the form's fields name it (the action answers with it). */
export interface BookedValues {
  gpu_type: string;
  node_count: string;
  starts_local: string;
  ends_local: string;
  cluster_id: string;
}

export interface BookingPricing {
  cents_per_gpu_hour: number | null;
  /** the fewest and most GPUs of the type one node has */
  gpus_per_node: { min: number; max: number };
}

/** What a booking costs for its window, as the form and its confirmation say it (null when it cannot be priced yet). */
export function bookingPrice(pricing: BookingPricing | undefined, nodes: number, startsLocal: string, endsLocal: string) {
  const starts = Date.parse(`${startsLocal}Z`);
  const ends = Date.parse(`${endsLocal}Z`);
  if (!pricing || pricing.cents_per_gpu_hour === null || !Number.isInteger(nodes) || nodes < 1 || !(ends > starts)) return null;
  const seconds = (ends - starts) / 1000;
  const { min, max } = pricing.gpus_per_node;
  return {
    seconds,
    gpus: { min: nodes * min, max: nodes * max },
    cents: {
      min: estimateCents(nodes * min, pricing.cents_per_gpu_hour, seconds),
      max: estimateCents(nodes * max, pricing.cents_per_gpu_hour, seconds),
    },
    rate: pricing.cents_per_gpu_hour,
  };
}

const priceWords = (p: NonNullable<ReturnType<typeof bookingPrice>>) =>
  p.cents.min === p.cents.max ? formatCents(p.cents.max) : `${formatCents(p.cents.min)} to ${formatCents(p.cents.max)}`;

export function BookReservationForm({
  action,
  gpuTypes,
  clusters,
  defaults,
  pricing,
}: {
  action: FormAction<{ id: string; booked: BookedValues }>;
  gpuTypes: string[];
  clusters: Array<{ id: string; name: string }>;
  defaults: { gpuType?: string; startsAt: string; endsAt: string };
  pricing: Record<string, BookingPricing>;
}) {
  // a booking commits money: after it, the form keeps what was booked (and says so) rather than a fresh default
  const { state, dispatch, formRef } = useActionForm(action, false);
  const booked = state.ok ? state.data?.booked : undefined;
  // the times are typed in local inputs and sent as their ISO twins, which the schema names
  const f = formFields(booked ? { ...state, values: { ...booked } } : state, {
    paths: { starts_local: "starts_at", ends_local: "ends_at" },
  });
  const [gpuType, setGpuType] = useLiveField(f, "gpu_type", defaults.gpuType ?? gpuTypes[0] ?? "");
  const [nodes, setNodes] = useLiveField(f, "node_count", "2");
  const [startsLocal, setStarts] = useLiveField(f, "starts_local", toUtcInput(defaults.startsAt));
  const [endsLocal, setEnds] = useLiveField(f, "ends_local", toUtcInput(defaults.endsAt));
  const [reviewing, setReviewing] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => setReviewing(false), [state.at]);
  const price = bookingPrice(pricing[gpuType], Number(nodes), startsLocal, endsLocal);
  return (
    <form
      ref={formRef}
      action={dispatch}
      onSubmit={(ev) => {
        stampInstants(ev.currentTarget);
        // the first submit opens the review; only its own button books
        const submitter = (ev.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
        if (submitter?.value !== "confirm") {
          ev.preventDefault();
          setReviewing(true);
        }
      }}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-5"
      aria-label="Book nodes"
    >
      <Field label="GPU type" {...f("gpu_type", defaults.gpuType ?? gpuTypes[0])}>
        {(p) => (
          <select {...p} onChange={(ev) => setGpuType(ev.target.value)} required>
            {gpuTypes.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Whole nodes" {...f("node_count", "2")} hint="In one cluster, one pod when possible">
        {(p) => <input {...p} onChange={(ev) => setNodes(ev.target.value)} type="number" min={1} max={1024} required />}
      </Field>
      <Field label="Starts (UTC)" {...f("starts_local", toUtcInput(defaults.startsAt))} idPrefix="book">
        {(p) => <input {...p} onChange={(ev) => setStarts(ev.target.value)} type="datetime-local" required />}
      </Field>
      <Field label="Ends (UTC)" {...f("ends_local", toUtcInput(defaults.endsAt))} idPrefix="book">
        {(p) => <input {...p} onChange={(ev) => setEnds(ev.target.value)} type="datetime-local" required />}
      </Field>
      <Field label="Cluster" {...f("cluster_id")} hint="Optional">
        {(p) => (
          <select {...p}>
            <option value="">Any cluster</option>
            {clusters.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <input type="hidden" name="starts_at" data-instant-for="book-starts_local" />
      <input type="hidden" name="ends_at" data-instant-for="book-ends_local" />
      <p className="text-sm text-slate-700 sm:col-span-2 lg:col-span-5" data-testid="booking-price" aria-live="polite">
        {price ? (
          <>
            <strong className="tabular-nums">{priceWords(price)}</strong> for {formatDuration(price.seconds * 1000)}:{" "}
            {price.gpus.min === price.gpus.max ? price.gpus.max : `${price.gpus.min}–${price.gpus.max}`} {gpuType} GPUs at{" "}
            {formatCents(price.rate)} per GPU-hour, billed per second for the whole window, used or not.
          </>
        ) : pricing[gpuType]?.cents_per_gpu_hour === null ? (
          `${gpuType} has no rate yet: your operator prices it before it can be booked.`
        ) : (
          "Choose whole nodes and a window that ends after it starts to see the price."
        )}
      </p>
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2 lg:col-span-5">
        <SubmitButton>Review booking…</SubmitButton>
        {booked && state.data?.id ? (
          <p role="status" data-testid="form-message" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
            {state.message}{" "}
            <Link className="font-medium underline" href={`/dashboard/reservations/${state.data.id}`}>
              Open the reservation
            </Link>
          </p>
        ) : (
          <FormMessage state={state} />
        )}
      </div>
      <Dialog
        open={reviewing}
        onClose={() => setReviewing(false)}
        title={`Book ${nodes} × ${gpuType} node${nodes === "1" ? "" : "s"}?`}
        initialFocus={keep}
        testId="booking-review"
      >
        <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
          <dt className="text-slate-500">From</dt>
          <dd className="font-medium text-slate-900">{startsLocal.replace("T", " ")} UTC</dd>
          <dt className="text-slate-500">To</dt>
          <dd className="font-medium text-slate-900">{endsLocal.replace("T", " ")} UTC</dd>
          <dt className="text-slate-500">Price</dt>
          <dd className="font-medium tabular-nums text-slate-900" data-testid="booking-review-price">
            {price ? `${priceWords(price)} (${formatDuration(price.seconds * 1000)})` : "not priced yet"}
          </dd>
        </dl>
        <p className="text-sm text-slate-600">
          Billed per second for the whole window, used or not. Cancel before it starts and nothing is billed; release it early and billing
          ends then.
        </p>
        <div className="flex flex-wrap justify-end gap-3">
          <Button ref={keep} type="button" variant="secondary" onClick={() => setReviewing(false)}>
            Change booking
          </Button>
          <SubmitButton name="book" value="confirm">
            {price ? `Book for ${priceWords(price)}` : "Book nodes"}
          </SubmitButton>
        </div>
      </Dialog>
    </form>
  );
}

export function EndReservationButton({ action, id, kind }: { action: FormAction; id: string; kind: "cancel" | "release" }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id }}
      label={kind === "cancel" ? "Cancel reservation" : "Release early"}
      showSuccess
      confirm={
        kind === "cancel"
          ? {
              title: "Cancel this reservation?",
              body: "Its nodes go back to the fleet before the window starts. Nothing is billed.",
              confirmLabel: "Cancel reservation",
              keepLabel: "Keep reservation",
            }
          : {
              title: "Release these nodes now?",
              body: "Work inside stops, the nodes go back to the fleet and billing ends now.",
              confirmLabel: "Release nodes",
              keepLabel: "Keep nodes",
            }
      }
    />
  );
}

export function ExtendReservationForm({ action, id, endsAt }: { action: FormAction; id: string; endsAt: string }) {
  const { state, dispatch } = useActionForm(action, false);
  const suggested = new Date(Date.parse(endsAt) + 86_400_000).toISOString();
  const ref = useRef<HTMLFormElement>(null);
  const f = formFields(state, { paths: { extend_local: "ends_at" }, idPrefix: "extend" });
  return (
    <form
      ref={ref}
      action={dispatch}
      onSubmit={(ev) => stampInstants(ev.currentTarget)}
      className="flex flex-wrap items-end gap-3 p-5"
      aria-label="Extend reservation"
    >
      <input type="hidden" name="id" value={id} />
      <Field
        label="New end (UTC)"
        {...f("extend_local", toUtcInput(suggested))}
        hint="Later than the current end; its nodes must be free until then"
      >
        {(p) => <input {...p} type="datetime-local" required />}
      </Field>
      <input type="hidden" name="ends_at" data-instant-for="extend-extend_local" />
      <SubmitButton variant="secondary">Extend</SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}
