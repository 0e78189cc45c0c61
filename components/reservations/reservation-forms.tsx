"use client";
import { useRef } from "react";
import { ConfirmedAction } from "@/components/forms/confirmed-action";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, GpuTypeField, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm, type FormAction } from "@/components/forms/use-action-form";

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

export function BookReservationForm({
  action,
  gpuTypes,
  clusters,
  defaults,
}: {
  action: FormAction;
  gpuTypes: string[];
  clusters: Array<{ id: string; name: string }>;
  defaults: { gpuType?: string; startsAt: string; endsAt: string };
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  // the times are typed in local inputs and sent as their ISO twins, which the schema names
  const f = formFields(state, { paths: { starts_local: "starts_at", ends_local: "ends_at" } });
  return (
    <form
      ref={formRef}
      action={dispatch}
      onSubmit={(ev) => stampInstants(ev.currentTarget)}
      className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-5"
      aria-label="Book nodes"
    >
      <GpuTypeField field={f("gpu_type", defaults.gpuType)} gpuTypes={gpuTypes} />
      <Field label="Whole nodes" {...f("node_count", "2")} hint="In one cluster, one pod when possible">
        {(p) => <input {...p} type="number" min={1} max={1024} required />}
      </Field>
      <Field label="Starts (UTC)" {...f("starts_local", toUtcInput(defaults.startsAt))} idPrefix="book">
        {(p) => <input {...p} type="datetime-local" required />}
      </Field>
      <Field label="Ends (UTC)" {...f("ends_local", toUtcInput(defaults.endsAt))} idPrefix="book">
        {(p) => <input {...p} type="datetime-local" required />}
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
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2 lg:col-span-5">
        <SubmitButton>Book nodes</SubmitButton>
        <FormMessage state={state} />
      </div>
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
