"use client";
import { Field, FormMessage, GpuTypeField, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

export function SubmitJobForm({ action, gpuTypes, reservations = [] }: { action: FormAction; gpuTypes: string[]; reservations?: Array<{ id: string; label: string }> }) {
  const { state, dispatch, formRef } = useActionForm(action);
  const e = state.fieldErrors ?? {};
  const v = state.values ?? {};
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Submit job">
      <Field label="Name" name="name" error={e.name}>{(p) => <input {...p} key={`n${state.at}`} defaultValue={v.name} required maxLength={200} placeholder="llama-finetune" />}</Field>
      <GpuTypeField error={e.gpu_type} value={v.gpu_type} gpuTypes={gpuTypes} at={state.at} />
      <Field label="GPUs" name="gpu_count" error={e.gpu_count}>{(p) => <input {...p} key={`c${state.at}`} defaultValue={v.gpu_count ?? "1"} type="number" min={1} required />}</Field>
      <Field label="Priority" name="priority" error={e.priority} hint="1 is highest">
        {(p) => <input {...p} key={`p${state.at}`} defaultValue={v.priority ?? "5"} type="number" min={1} max={10} />}
      </Field>
      <Field label="Duration (s)" name="duration_s" error={e.duration_s} hint="Time limit; helps backfill">
        {(p) => <input {...p} key={`d${state.at}`} defaultValue={v.duration_s} type="number" min={1} placeholder="3600" />}
      </Field>
      <Field label="Retries" name="max_retries" error={e.max_retries}>{(p) => <input {...p} key={`r${state.at}`} defaultValue={v.max_retries ?? "0"} type="number" min={0} max={10} />}</Field>
      <Field label="Image" name="image" error={e.image}>{(p) => <input {...p} key={`i${state.at}`} defaultValue={v.image} placeholder="nvcr.io/nvidia/pytorch:24.10-py3" />}</Field>
      <Field label="Command" name="command" error={e.command}>{(p) => <input {...p} key={`m${state.at}`} defaultValue={v.command} placeholder="python train.py" />}</Field>
      {reservations.length ? (
        <Field label="Reservation" name="reservation_id" error={e.reservation_id} hint="Run only on its nodes, while it is active">
          {(p) => (
            <select {...p} key={`v${state.at}`} defaultValue={v.reservation_id ?? ""}>
              <option value="">None (any free GPUs)</option>
              {reservations.map((r) => <option key={r.id} value={r.id}>{r.label}</option>)}
            </select>
          )}
        </Field>
      ) : null}
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Submit job</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function CancelJobButton({ action, id, name }: { action: FormAction; id: string; name: string }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} onSubmit={(ev) => { if (!confirm(`Cancel “${name}”?`)) ev.preventDefault(); }} className="inline-flex items-center gap-2">
      <input type="hidden" name="id" value={id} />
      <SubmitButton variant="danger" size="sm">Cancel</SubmitButton>
      {state.message && !state.ok ? <span role="status" className="text-xs text-red-600">{state.message}</span> : null}
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
