"use client";
import { useState } from "react";
import { estimateCents, formatCents, rateFor } from "@/lib/billing/money";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

const METRICS = [
  { value: "none", label: "Off (fixed replicas)" },
  { value: "requests_per_replica", label: "Requests/s per replica" },
  { value: "p95_ms", label: "p95 latency (ms)" },
];

/** Autoscaling fields: the target only makes sense with a metric, so it follows the select. */
function AutoscaleFields({ e, v, defaults, idPrefix }: { e: Record<string, string>; v: Record<string, string>; defaults: { metric: string; target: string; cooldown: string }; idPrefix: string }) {
  const [metric, setMetric] = useState(v.autoscale_metric ?? defaults.metric);
  return (
    <>
      <Field label="Autoscaling" name="autoscale_metric" error={e.autoscale_metric} idPrefix={idPrefix}>
        {(p) => (
          <select {...p} value={metric} onChange={(ev) => setMetric(ev.target.value)}>
            {METRICS.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
          </select>
        )}
      </Field>
      <Field label="Target" name="autoscale_target" error={e.autoscale_target} idPrefix={idPrefix} hint={metric === "none" ? "Choose a metric first" : metric === "p95_ms" ? "Milliseconds" : "Requests per second per replica"}>
        {(p) => <input {...p} defaultValue={v.autoscale_target ?? defaults.target} type="number" min={0} step="any" disabled={metric === "none"} placeholder={metric === "p95_ms" ? "500" : "20"} />}
      </Field>
      <Field label="Cool-down (s)" name="cooldown_s" error={e.cooldown_s} idPrefix={idPrefix} hint="Scale-down waits this long; scale-up a quarter of it">
        {(p) => <input {...p} defaultValue={v.cooldown_s ?? defaults.cooldown} type="number" min={30} max={86400} />}
      </Field>
    </>
  );
}

/** What an endpoint costs at today's rate while its replicas hold their GPUs, and at its autoscaling maximum. */
function EndpointEstimate({ rates, gpuType, gpusPerReplica, replicas, maxReplicas }: { rates: Record<string, number>; gpuType: string; gpusPerReplica: number; replicas: number; maxReplicas: number }) {
  const rate = rateFor(rates, gpuType);
  if (rate === null || !(gpusPerReplica >= 1) || !(replicas >= 1)) return null;
  const perHour = estimateCents(gpusPerReplica * replicas, rate, 3600);
  const atMax = maxReplicas > replicas ? estimateCents(gpusPerReplica * maxReplicas, rate, 3600) : null;
  return (
    <p data-testid="endpoint-estimate" className="text-sm text-slate-600 sm:col-span-2 lg:col-span-4">
      {formatCents(perHour)} per hour, about {formatCents(perHour * 24 * 30)} per 30 days, while {replicas} replica{replicas === 1 ? "" : "s"} of {gpusPerReplica} × {gpuType} run ({formatCents(rate)} per GPU-hour, billed per second)
      {atMax !== null ? `; up to ${formatCents(atMax)} per hour at ${maxReplicas} replicas` : ""}.
    </p>
  );
}

export function CreateEndpointForm({ action, gpuTypes, rates }: { action: FormAction; gpuTypes: string[]; rates: Record<string, number> }) {
  // on success the action redirects to the new endpoint's page
  const { state, dispatch, formRef } = useActionForm(action);
  const e = state.fieldErrors ?? {};
  const v = state.values ?? {};
  const [gpuType, setGpuType] = useState(v.gpu_type ?? gpuTypes[0] ?? "");
  const [perReplica, setPerReplica] = useState(v.gpus_per_replica ?? "1");
  const [replicas, setReplicas] = useState(v.replicas ?? "2");
  const [maxReplicas, setMaxReplicas] = useState(v.max_replicas ?? "");
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Create endpoint">
      <Field label="Name" name="name" error={e.name} hint="Lower-case, digits, dashes">{(p) => <input {...p} key={`n${state.at}`} defaultValue={v.name} required maxLength={100} placeholder="llama-70b-chat" />}</Field>
      <Field label="Model" name="model" error={e.model}>{(p) => <input {...p} key={`m${state.at}`} defaultValue={v.model} required maxLength={300} placeholder="meta-llama/Llama-3.1-70B-Instruct" />}</Field>
      <Field label="GPU type" name="gpu_type" error={e.gpu_type}>
        {(p) => (
          <select {...p} value={gpuType} onChange={(ev) => setGpuType(ev.target.value)} required>
            {gpuTypes.length === 0 ? <option value="">No GPUs in the fleet yet</option> : null}
            {gpuTypes.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        )}
      </Field>
      <Field label="GPUs per replica" name="gpus_per_replica" error={e.gpus_per_replica} hint="On one node">{(p) => <input {...p} value={perReplica} onChange={(ev) => setPerReplica(ev.target.value)} type="number" min={1} max={64} required />}</Field>
      <Field label="Replicas" name="replicas" error={e.replicas}>{(p) => <input {...p} value={replicas} onChange={(ev) => setReplicas(ev.target.value)} type="number" min={1} max={64} required />}</Field>
      <Field label="Min replicas" name="min_replicas" error={e.min_replicas} hint="Defaults to replicas">{(p) => <input {...p} key={`mi${state.at}`} defaultValue={v.min_replicas} type="number" min={1} max={64} />}</Field>
      <Field label="Max replicas" name="max_replicas" error={e.max_replicas} hint="Defaults to replicas">{(p) => <input {...p} value={maxReplicas} onChange={(ev) => setMaxReplicas(ev.target.value)} type="number" min={1} max={64} />}</Field>
      <Field label="SLA p95 (ms)" name="sla_p95_ms" error={e.sla_p95_ms} hint="Optional">{(p) => <input {...p} key={`s${state.at}`} defaultValue={v.sla_p95_ms} type="number" min={1} placeholder="800" />}</Field>
      <Field label="SLA availability (%)" name="sla_availability_pct" error={e.sla_availability_pct} hint="Optional, e.g. 99.5">{(p) => <input {...p} key={`a${state.at}`} defaultValue={v.sla_availability_pct} type="number" min={50} max={99.999} step="any" placeholder="99.5" />}</Field>
      <AutoscaleFields key={`as${state.at}`} e={e} v={v} defaults={{ metric: "none", target: "", cooldown: "300" }} idPrefix="f" />
      <EndpointEstimate rates={rates} gpuType={gpuType} gpusPerReplica={Number(perReplica)} replicas={Number(replicas)} maxReplicas={Number(maxReplicas) || Number(replicas)} />
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
  const e = state.fieldErrors ?? {};
  const v = state.ok ? {} : (state.values ?? {});
  const str = (n: number | null) => (n === null ? "" : String(n));
  return (
    <form ref={formRef} action={dispatch} className="grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" aria-label="Endpoint settings">
      <input type="hidden" name="id" value={s.id} />
      <Field label="Replicas" name="replicas" error={e.replicas} idPrefix="s">{(p) => <input {...p} key={`r${state.at}`} defaultValue={v.replicas ?? s.replicas} type="number" min={1} max={64} required />}</Field>
      <Field label="Min replicas" name="min_replicas" error={e.min_replicas} idPrefix="s">{(p) => <input {...p} key={`mi${state.at}`} defaultValue={v.min_replicas ?? s.min} type="number" min={1} max={64} required />}</Field>
      <Field label="Max replicas" name="max_replicas" error={e.max_replicas} idPrefix="s">{(p) => <input {...p} key={`ma${state.at}`} defaultValue={v.max_replicas ?? s.max} type="number" min={1} max={64} required />}</Field>
      <Field label="SLA p95 (ms)" name="sla_p95_ms" error={e.sla_p95_ms} idPrefix="s" hint="Empty: no latency target">{(p) => <input {...p} key={`s${state.at}`} defaultValue={v.sla_p95_ms ?? str(s.slaP95Ms)} type="number" min={1} />}</Field>
      <Field label="SLA availability (%)" name="sla_availability_pct" error={e.sla_availability_pct} idPrefix="s" hint="Empty: no availability target">{(p) => <input {...p} key={`a${state.at}`} defaultValue={v.sla_availability_pct ?? str(s.slaAvailabilityPct)} type="number" step="any" min={50} max={99.999} />}</Field>
      <AutoscaleFields key={`as${state.at}`} e={e} v={v} defaults={{ metric: s.metric, target: str(s.target), cooldown: String(s.cooldownS) }} idPrefix="s" />
      <div className="flex items-center gap-3 sm:col-span-2 lg:col-span-4">
        <SubmitButton>Save changes</SubmitButton>
        <FormMessage state={state} />
      </div>
    </form>
  );
}

export function StopStartEndpointButton({ action, id, name, stopped }: { action: FormAction; id: string; name: string; stopped: boolean }) {
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} onSubmit={(ev) => { if (!stopped && !confirm(`Stop “${name}”? Its replicas stop and their GPUs are released.`)) ev.preventDefault(); }} className="inline-flex items-center gap-2">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="stopped" value={stopped ? "false" : "true"} />
      <SubmitButton variant={stopped ? "primary" : "secondary"} size="sm">{stopped ? "Start" : "Stop"}</SubmitButton>
      {state.message && !state.ok ? <span role="status" className="text-xs text-red-600">{state.message}</span> : null}
    </form>
  );
}

export function DeleteEndpointButton({ action, id, name, after }: { action: FormAction; id: string; name: string; after: string }) {
  // on success the action redirects to `after` (the list), since this endpoint's page is gone
  const { state, dispatch } = useActionForm(action, false);
  return (
    <form action={dispatch} onSubmit={(ev) => { if (!confirm(`Delete “${name}”? Its replicas stop; its history and invoices stay.`)) ev.preventDefault(); }} className="inline-flex items-center gap-2">
      <input type="hidden" name="id" value={id} />
      <input type="hidden" name="after" value={after} />
      <SubmitButton variant="danger" size="sm">Delete</SubmitButton>
      {state.message && !state.ok ? <span role="status" className="text-xs text-red-600">{state.message}</span> : null}
    </form>
  );
}
