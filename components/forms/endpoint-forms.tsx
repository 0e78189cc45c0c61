"use client";
import { estimateCents, formatCents, rateFor } from "@/lib/billing/money";
import { ConfirmedAction } from "./confirmed-action";
import { formFields, type FormFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, useLiveField, type FormAction } from "./use-action-form";

const METRICS = [
  { value: "none", label: "Off (fixed replicas)" },
  { value: "requests_per_replica", label: "Requests/s per replica" },
  { value: "p95_ms", label: "p95 latency (ms)" },
];

/** Autoscaling fields: the target only makes sense with a metric, so it follows the select. */
function AutoscaleFields({ f, defaults }: { f: FormFields; defaults: { metric: string; target: string; cooldown: string } }) {
  const [metric, setMetric] = useLiveField(f, "autoscale_metric", defaults.metric);
  return (
    <>
      <Field label="Autoscaling" {...f("autoscale_metric", defaults.metric)}>
        {(p) => (
          <select {...p} onChange={(ev) => setMetric(ev.target.value)}>
            {METRICS.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Target"
        {...f("autoscale_target", defaults.target)}
        hint={metric === "none" ? "Choose a metric first" : metric === "p95_ms" ? "Milliseconds" : "Requests per second per replica"}
      >
        {(p) => (
          <input {...p} type="number" min={0} step="any" disabled={metric === "none"} placeholder={metric === "p95_ms" ? "500" : "20"} />
        )}
      </Field>
      <Field label="Cool-down (s)" {...f("cooldown_s", defaults.cooldown)} hint="Scale-down waits this long; scale-up a quarter of it">
        {(p) => <input {...p} type="number" min={30} max={86400} />}
      </Field>
    </>
  );
}

/** What an endpoint costs at today's rate while its replicas hold their GPUs, and at its autoscaling maximum. */
function EndpointEstimate({
  rates,
  gpuType,
  gpusPerReplica,
  replicas,
  maxReplicas,
}: {
  rates: Record<string, number>;
  gpuType: string;
  gpusPerReplica: number;
  replicas: number;
  maxReplicas: number;
}) {
  const rate = rateFor(rates, gpuType);
  if (rate === null || !(gpusPerReplica >= 1) || !(replicas >= 1)) return null;
  const perHour = estimateCents(gpusPerReplica * replicas, rate, 3600);
  const atMax = maxReplicas > replicas ? estimateCents(gpusPerReplica * maxReplicas, rate, 3600) : null;
  return (
    <p data-testid="endpoint-estimate" className="text-sm text-slate-600 sm:col-span-2 lg:col-span-4">
      {formatCents(perHour)} per hour, about {formatCents(perHour * 24 * 30)} per 30 days, while {replicas} replica
      {replicas === 1 ? "" : "s"} of {gpusPerReplica} × {gpuType} run ({formatCents(rate)} per GPU-hour, billed per second)
      {atMax !== null ? `; up to ${formatCents(atMax)} per hour at ${maxReplicas} replicas` : ""}.
    </p>
  );
}

export function CreateEndpointForm({ action, gpuTypes, rates }: { action: FormAction; gpuTypes: string[]; rates: Record<string, number> }) {
  // on success the action redirects to the new endpoint's page
  const { state, dispatch, formRef } = useActionForm(action);
  const f = formFields(state);
  const [gpuType, setGpuType] = useLiveField(f, "gpu_type", gpuTypes[0] ?? "");
  const [perReplica, setPerReplica] = useLiveField(f, "gpus_per_replica", "1");
  const [replicas, setReplicas] = useLiveField(f, "replicas", "2");
  const [maxReplicas, setMaxReplicas] = useLiveField(f, "max_replicas", "");
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Create endpoint">
      <Field label="Name" {...f("name")} hint="Lower-case, digits, dashes">
        {(p) => <input {...p} required maxLength={100} placeholder="llama-70b-chat" />}
      </Field>
      <Field label="Model" {...f("model")}>
        {(p) => <input {...p} required maxLength={300} placeholder="meta-llama/Llama-3.1-70B-Instruct" />}
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
      <Field label="GPUs per replica" {...f("gpus_per_replica", "1")} hint="On one node">
        {(p) => <input {...p} onChange={(ev) => setPerReplica(ev.target.value)} type="number" min={1} max={64} required />}
      </Field>
      <Field label="Replicas" {...f("replicas", "2")}>
        {(p) => <input {...p} onChange={(ev) => setReplicas(ev.target.value)} type="number" min={1} max={64} required />}
      </Field>
      <Field label="Min replicas" {...f("min_replicas")} hint="Defaults to replicas">
        {(p) => <input {...p} type="number" min={1} max={64} />}
      </Field>
      <Field label="Max replicas" {...f("max_replicas")} hint="Defaults to replicas">
        {(p) => <input {...p} onChange={(ev) => setMaxReplicas(ev.target.value)} type="number" min={1} max={64} />}
      </Field>
      <Field label="SLA p95 (ms)" {...f("sla_p95_ms")} hint="Optional">
        {(p) => <input {...p} type="number" min={1} placeholder="800" />}
      </Field>
      <Field label="SLA availability (%)" {...f("sla_availability_pct")} hint="Optional, e.g. 99.5">
        {(p) => <input {...p} type="number" min={50} max={99.999} step="any" placeholder="99.5" />}
      </Field>
      <AutoscaleFields key={f.key} f={f} defaults={{ metric: "none", target: "", cooldown: "300" }} />
      <EndpointEstimate
        rates={rates}
        gpuType={gpuType}
        gpusPerReplica={Number(perReplica)}
        replicas={Number(replicas)}
        maxReplicas={Number(maxReplicas) || Number(replicas)}
      />
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Create endpoint</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export interface EndpointSettings {
  id: string;
  replicas: number;
  min: number;
  max: number;
  slaP95Ms: number | null;
  slaAvailabilityPct: number | null;
  metric: string;
  target: number | null;
  cooldownS: number;
}

export function EndpointSettingsForm({ action, endpoint: s }: { action: FormAction; endpoint: EndpointSettings }) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  // the page refreshes itself: when the saved settings change (saved here, or the autoscaler moved
  // the replicas) the fields show them, so the form never holds a value the endpoint no longer has
  const saved = [s.replicas, s.min, s.max, s.slaP95Ms, s.slaAvailabilityPct, s.metric, s.target, s.cooldownS].join("/");
  const f = formFields(state, { idPrefix: "s", remountWith: saved });
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Endpoint settings">
      <input type="hidden" name="id" value={s.id} />
      <Field label="Replicas" {...f("replicas", s.replicas)}>
        {(p) => <input {...p} type="number" min={1} max={64} required />}
      </Field>
      <Field label="Min replicas" {...f("min_replicas", s.min)}>
        {(p) => <input {...p} type="number" min={1} max={64} required />}
      </Field>
      <Field label="Max replicas" {...f("max_replicas", s.max)}>
        {(p) => <input {...p} type="number" min={1} max={64} required />}
      </Field>
      <Field label="SLA p95 (ms)" {...f("sla_p95_ms", s.slaP95Ms)} hint="Empty: no latency target">
        {(p) => <input {...p} type="number" min={1} />}
      </Field>
      <Field label="SLA availability (%)" {...f("sla_availability_pct", s.slaAvailabilityPct)} hint="Empty: no availability target">
        {(p) => <input {...p} type="number" step="any" min={50} max={99.999} />}
      </Field>
      <AutoscaleFields
        key={f.key}
        f={f}
        defaults={{ metric: s.metric, target: s.target === null ? "" : String(s.target), cooldown: String(s.cooldownS) }}
      />
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Save changes</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function StopStartEndpointButton({ action, id, name, stopped }: { action: FormAction; id: string; name: string; stopped: boolean }) {
  return (
    <ConfirmedAction
      action={action}
      fields={{ id, stopped: stopped ? "false" : "true" }}
      label={stopped ? "Start" : "Stop"}
      variant={stopped ? "primary" : "secondary"}
      confirm={
        stopped
          ? null
          : {
              title: `Stop “${name}”?`,
              body: "Its replicas stop and their GPUs are released; requests to it are refused until it starts again. Billing stops with them.",
              confirmLabel: "Stop endpoint",
              keepLabel: "Keep serving",
            }
      }
    />
  );
}

export function DeleteEndpointButton({ action, id, name, after }: { action: FormAction; id: string; name: string; after: string }) {
  // on success the action redirects to `after` (the list), since this endpoint's page is gone
  return (
    <ConfirmedAction
      action={action}
      fields={{ id, after }}
      label="Delete"
      confirm={{
        title: `Delete “${name}”?`,
        body: "Its replicas stop and its address stops answering; its history and invoices stay.",
        confirmLabel: "Delete endpoint",
        keepLabel: "Keep endpoint",
      }}
    />
  );
}
