"use client";
import { estimateCents, formatCents, rateFor } from "@/lib/billing/money";
import { ConfirmedAction, type Confirmation } from "./confirmed-action";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, useLiveField, type FormAction } from "./use-action-form";

export function CreatePodForm({ action, gpuTypes, rates }: { action: FormAction; gpuTypes: string[]; rates: Record<string, number> }) {
  // on success the action redirects to the new pod's page
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  const [gpuType, setGpuType] = useLiveField(f, "gpu_type", gpuTypes[0] ?? "");
  const [count, setCount] = useLiveField(f, "gpu_count", "1");
  const rate = rateFor(rates, gpuType);
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Create pod">
      <Field label="Name" {...f("name")} hint="Lower-case, digits, dashes">
        {(p) => <input {...p} required maxLength={100} placeholder="notebook" />}
      </Field>
      <Field label="GPU type" {...f("gpu_type", gpuTypes[0] ?? "")}>
        {(p) => (
          <select {...p} onChange={(ev) => setGpuType(ev.target.value)} required>
            {gpuTypes.length === 0 ? <option value="">No GPUs in the fleet yet</option> : null}
            {gpuTypes.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="GPUs" {...f("gpu_count", "1")} hint="On one node">
        {(p) => <input {...p} onChange={(ev) => setCount(ev.target.value)} type="number" min={1} max={64} required />}
      </Field>
      <Field label="Image" {...f("image")}>
        {(p) => <input {...p} required maxLength={500} placeholder="runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04" />}
      </Field>
      <Field label="Ports to publish" {...f("ports")} hint="Comma-separated, e.g. 8888 for Jupyter; 22 comes with an SSH key">
        {(p) => <input {...p} inputMode="numeric" placeholder="8888" />}
      </Field>
      <div className="sm:col-span-2 lg:col-span-3">
        <Field label="SSH public key" {...f("ssh_public_key")} hint="One line from ~/.ssh/id_ed25519.pub; optional">
          {(p) => <textarea {...p} rows={2} spellCheck={false} placeholder="ssh-ed25519 AAAA… you@laptop" />}
        </Field>
      </div>
      <label className="flex items-start gap-2 text-sm text-slate-700 sm:col-span-2 lg:col-span-4">
        <input
          key={f.key}
          type="checkbox"
          name="restart_on_failure"
          className="mt-1"
          defaultChecked={f.checked("restart_on_failure", false)}
        />
        <span>
          Restart on failure: if its node fails, place it again elsewhere with a fresh container. Otherwise it is marked failed and you are
          alerted (a pod keeps state on its node).
        </span>
      </label>
      {rate !== null && Number(count) >= 1 ? (
        <p data-testid="pod-estimate" className="text-sm text-slate-600 sm:col-span-2 lg:col-span-4">
          {formatCents(estimateCents(Number(count), rate, 3600))} per hour while it runs ({formatCents(rate)} per GPU-hour, billed per
          second); nothing while it is stopped.
        </p>
      ) : null}
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Create pod</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

const CONFIRM: Record<"stop" | "start" | "terminate", (name: string) => Confirmation | null> = {
  stop: (name) => ({
    title: `Stop “${name}”?`,
    body: "Its container stops, its GPUs are released and billing stops. Files inside the container are not kept.",
    confirmLabel: "Stop pod",
    keepLabel: "Keep running",
  }),
  start: () => null,
  terminate: (name) => ({
    title: `Terminate “${name}” for good?`,
    body: "Its container is removed and its GPUs are released; this cannot be undone.",
    confirmLabel: "Terminate pod",
    keepLabel: "Keep pod",
  }),
};

export function PodActionButton({
  action,
  id,
  name,
  verb,
}: {
  action: FormAction;
  id: string;
  name: string;
  verb: "stop" | "start" | "terminate";
}) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id, action: verb }}
      label={verb === "stop" ? "Stop" : verb === "start" ? "Start" : "Terminate"}
      variant={verb === "terminate" ? "danger" : verb === "start" ? "primary" : "secondary"}
      confirm={CONFIRM[verb](name)}
      showSuccess
    />
  );
}
