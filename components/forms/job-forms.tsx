"use client";
import { estimateCents, formatCents, formatDuration, rateFor } from "@/lib/billing/money";
import { jobFit, type FitContext } from "@/lib/jobs/job-fit";
import { ConfirmedAction } from "./confirmed-action";
import { formFields } from "./form-fields";
import { Field, FormMessage, inputClass, SubmitButton } from "./form-parts";
import { useActionForm, useLiveField, type FormAction } from "./use-action-form";

export interface JobSpec {
  name?: string;
  gpu_count?: number;
  gpu_type?: string;
  priority?: number;
  max_retries?: number;
  duration_s?: number | null;
  image?: string | null;
  command?: string | null;
  reservation_id?: string | null;
}

/**
 * Submitting a job. As the numbers change the form says whether the job fits the organisation's
 * quota and the fleet (it never could / it will wait for quota) and what it costs at today's rate,
 * before anything is sent. `prefill` is a job being cloned.
 */
export function SubmitJobForm({
  action,
  gpuTypes,
  fit,
  rates,
  prefill,
  reservations = [],
}: {
  action: FormAction;
  gpuTypes: string[];
  fit: FitContext;
  rates: Record<string, number>;
  prefill?: JobSpec;
  /** the tenant's reservations a job may be confined to */
  reservations?: Array<{ id: string; label: string }>;
}) {
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  /** a cloned job's value, else the form's own default */
  const start = (k: keyof JobSpec, fallback = ""): string => {
    const v = prefill?.[k];
    return v === null || v === undefined ? fallback : String(v);
  };
  const [count, setCount] = useLiveField(f, "gpu_count", start("gpu_count", "1"));
  const [type, setType] = useLiveField(f, "gpu_type", start("gpu_type", gpuTypes[0] ?? ""));
  const [duration, setDuration] = useLiveField(f, "duration_s", start("duration_s"));
  const gpus = Number(count);
  const verdict = count === "" ? null : jobFit(fit, gpus, type);
  const rate = rateFor(rates, type);
  const seconds = Number(duration);
  const estimate =
    rate === null || !Number.isInteger(gpus) || gpus < 1
      ? null
      : duration && seconds > 0
        ? `About ${formatCents(estimateCents(gpus, rate, seconds))} for ${formatDuration(seconds * 1000)} (${gpus} × ${type} at ${formatCents(rate)} per GPU-hour, billed per second).`
        : `${formatCents(estimateCents(gpus, rate, 3600))} per hour while it runs (${gpus} × ${type} at ${formatCents(rate)} per GPU-hour). Set a duration for a total.`;
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Submit job" id="submit-job">
      <Field label="Name" {...f("name", start("name"))}>
        {(p) => <input {...p} required maxLength={200} placeholder="llama-finetune" />}
      </Field>
      <Field label="GPU type" {...f("gpu_type", start("gpu_type", gpuTypes[0] ?? ""))}>
        {(p) => (
          <select {...p} onChange={(ev) => setType(ev.target.value)} required>
            {gpuTypes.length === 0 ? <option value="">No GPUs in the fleet yet</option> : null}
            {gpuTypes.map((t) => (
              <option key={t} value={t}>
                {t} ({(fit.capacity[t] ?? 0).toLocaleString("en-US")} in the fleet)
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="GPUs"
        {...f("gpu_count", start("gpu_count", "1"))}
        hint={`Your quota: ${fit.quota}, ${Math.max(0, fit.quota - fit.inUse)} free now`}
      >
        {(p) => <input {...p} onChange={(ev) => setCount(ev.target.value)} type="number" min={1} required />}
      </Field>
      <Field label="Priority" {...f("priority", start("priority", "5"))} hint="1 is highest">
        {(p) => <input {...p} type="number" min={1} max={10} />}
      </Field>
      <Field label="Duration (s)" {...f("duration_s", start("duration_s"))} hint="Time limit; helps backfill">
        {(p) => <input {...p} onChange={(ev) => setDuration(ev.target.value)} type="number" min={1} placeholder="3600" />}
      </Field>
      <Field label="Retries" {...f("max_retries", start("max_retries", "0"))}>
        {(p) => <input {...p} type="number" min={0} max={10} />}
      </Field>
      <Field label="Image" {...f("image", start("image"))}>
        {(p) => <input {...p} placeholder="nvcr.io/nvidia/pytorch:24.10-py3" />}
      </Field>
      <Field label="Command" {...f("command", start("command"))}>
        {(p) => <input {...p} placeholder="python train.py" />}
      </Field>
      {reservations.length ? (
        <Field label="Reservation" {...f("reservation_id", start("reservation_id"))} hint="Run only on its nodes, while it is active">
          {(p) => (
            <select {...p}>
              <option value="">None (any free GPUs)</option>
              {reservations.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <div className="space-y-2 sm:col-span-2 lg:col-span-4" aria-live="polite">
        {verdict?.message ? (
          <p
            data-testid="job-fit"
            className={`rounded-md px-3 py-2 text-sm ring-1 ${verdict.level === "never" ? "bg-red-50 text-red-800 ring-red-200" : "bg-amber-50 text-amber-900 ring-amber-200"}`}
          >
            {verdict.message}
          </p>
        ) : null}
        {estimate ? (
          <p data-testid="job-estimate" className="text-sm text-slate-600">
            {estimate}
          </p>
        ) : null}
      </div>
      <div className="flex flex-wrap items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>{verdict?.level === "wait" ? "Submit and wait for quota" : "Submit job"}</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function CancelJobButton({ action, id, name, running = true }: { action: FormAction; id: string; name: string; running?: boolean }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id }}
      label="Cancel"
      confirm={{
        title: `Cancel “${name}”?`,
        body: running
          ? "It stops now and its GPUs are released; the time it ran is billed. A cancelled job is not retried."
          : "It leaves the queue and never runs. Nothing is billed.",
        confirmLabel: "Cancel job",
        keepLabel: running ? "Keep running" : "Keep waiting",
      }}
    />
  );
}

/** An operator moves a waiting job in the queue (1 is highest); the change is audited. */
export function PriorityForm({ action, id, name, priority }: { action: FormAction; id: string; name: string; priority: number }) {
  const { state, dispatch } = useActionForm(action, false);
  const f = formFields(state);
  return (
    <form action={dispatch} className="inline-flex items-center justify-end gap-1.5" aria-label={`Priority of ${name}`}>
      <input type="hidden" name="id" value={id} />
      <label className="sr-only" htmlFor={`prio-${id}`}>
        Priority of {name}
      </label>
      {/* remounted with each answer and each saved priority: React's reset after the action would
          otherwise put it back on the priority it first showed */}
      <select
        key={`${f.key}-${priority}`}
        id={`prio-${id}`}
        name="priority"
        defaultValue={f.value("priority", priority)}
        className={`${inputClass} w-16 py-1`}
      >
        {Array.from({ length: 10 }, (_, i) => i + 1).map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <SubmitButton variant="secondary" size="sm">
        Set
      </SubmitButton>
      {state.message ? (
        <span role="status" className={`text-xs ${state.ok ? "text-emerald-700" : "text-red-600"}`}>
          {state.ok ? "✓" : state.message}
        </span>
      ) : null}
    </form>
  );
}

/** Submits the same job again at once (a new job; the old one keeps its history). */
export function ResubmitJobButton({ action, id }: { action: FormAction; id: string }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} className="inline-flex items-center gap-2">
      <input type="hidden" name="id" value={id} />
      <SubmitButton variant="secondary" size="sm">
        Resubmit
      </SubmitButton>
      {state.message && !state.ok ? (
        <span role="status" className="text-xs text-red-600">
          {state.message}
        </span>
      ) : null}
    </form>
  );
}

export function RunCycleButton({ action }: { action: FormAction }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} className="flex flex-wrap items-center gap-3">
      <SubmitButton>Run a cycle now</SubmitButton>
      <FormMessage state={state} />
    </form>
  );
}
