"use client";
import { useState } from "react";
import { estimateCents, formatCents, rateFor } from "@/lib/billing/money";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

export function CreatePodForm({ action, gpuTypes, rates }: { action: FormAction; gpuTypes: string[]; rates: Record<string, number> }) {
  // on success the action redirects to the new pod's page
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  const [gpuType, setGpuType] = useState(f.value("gpu_type", gpuTypes[0] ?? ""));
  const [count, setCount] = useState(f.value("gpu_count", "1"));
  const rate = rateFor(rates, gpuType);
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Create pod">
      <Field label="Name" {...f("name")} hint="Lower-case, digits, dashes">
        {(p) => <input {...p} required maxLength={100} placeholder="notebook" />}
      </Field>
      <Field label="GPU type" {...f.bare("gpu_type")}>
        {(p) => (
          <select {...p} value={gpuType} onChange={(ev) => setGpuType(ev.target.value)} required>
            {gpuTypes.length === 0 ? <option value="">No GPUs in the fleet yet</option> : null}
            {gpuTypes.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="GPUs" {...f.bare("gpu_count")} hint="On one node">
        {(p) => <input {...p} value={count} onChange={(ev) => setCount(ev.target.value)} type="number" min={1} max={64} required />}
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

const CONFIRM: Record<"stop" | "start" | "terminate", (name: string) => string | null> = {
  stop: (name) => `Stop “${name}”? Its container stops, its GPUs are released and billing stops. Files inside the container are not kept.`,
  start: () => null,
  terminate: (name) => `Terminate “${name}” for good? Its container is removed; this cannot be undone.`,
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
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form
      action={dispatch}
      onSubmit={(ev) => {
        const question = CONFIRM[verb](name);
        if (question && !confirm(question)) ev.preventDefault();
      }}
      className="inline-flex items-center gap-2"
    >
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="action" value={verb} />
      <SubmitButton variant={verb === "terminate" ? "danger" : verb === "start" ? "primary" : "secondary"} size="sm">
        {verb === "stop" ? "Stop" : verb === "start" ? "Start" : "Terminate"}
      </SubmitButton>
      {state.message ? (
        <span role="status" className={`text-xs ${state.ok ? "text-emerald-700" : "text-red-600"}`}>
          {state.message}
        </span>
      ) : null}
    </form>
  );
}
