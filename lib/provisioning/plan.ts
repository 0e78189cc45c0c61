import type { Exchange } from "@/lib/redfish/client";
import { QUIRKS } from "@/lib/redfish/quirks";
import { isOneOf } from "@/lib/vocabulary";
import {
  PROVISIONING_FAILURES,
  PROVISIONING_STEPS,
  STEP_LABELS,
  type ExchangeJson,
  type ProvisioningJson,
  type ProvisioningStep,
  type ProvisioningStepJson,
} from "./schemas";

// A provisioning as its records tell it (pure): which step is next, when it is due, the exchange log
// each step keeps (bounded), and the view the API and the node page show.

/** A provisioning workflow as lib/fleet/node-workflows.ts reads it. */
export interface ProvisioningWorkflow {
  id: string;
  nodeId: string;
  status: "running" | "succeeded" | "failed" | "cancelled";
  requestedBy: string;
  details: Record<string, unknown>;
  outcome: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  steps: StepRecord[];
}

export interface StepRecord {
  id: string;
  name: string;
  status: "running" | "succeeded" | "failed" | "skipped";
  leaseToken: string | null;
  message: string | null;
  details: Record<string, unknown>;
  startedAt: Date;
  finishedAt: Date | null;
}

/** What a step keeps between visits (node_workflow_steps.details). */
export interface StepState {
  attempts?: number;
  /** not before: a step that waits (a BMC settling, a retry's backoff, the agent) */
  next_at?: string;
  exchanges?: Exchange[];
  exchanges_omitted?: number;
  [fact: string]: unknown;
}

/** The step to work on next and its record (running or failed), or null when every step is done. */
export function currentStep(w: Pick<ProvisioningWorkflow, "steps">): { name: ProvisioningStep; record?: StepRecord } | null {
  for (const name of PROVISIONING_STEPS) {
    const records = w.steps.filter((s) => s.name === name);
    const record = records[records.length - 1];
    if (record && (record.status === "succeeded" || record.status === "skipped")) continue;
    return { name, ...(record ? { record } : {}) };
  }
  return null;
}

/** When the workflow's current step may be worked on again (now when it does not wait). */
export function dueAt(w: Pick<ProvisioningWorkflow, "steps">, now: number): number {
  const step = currentStep(w);
  const next = step?.record?.status === "running" ? step.record.details.next_at : undefined;
  const at = typeof next === "string" ? Date.parse(next) : NaN;
  return Number.isNaN(at) ? now : at;
}

const HEAD = 20;
const TAIL = 40;

/** The step's exchange log with more appended: everything while short, else its first and its latest ones and a count of those left out. */
export function appendExchanges(state: StepState, more: Exchange[]): Pick<StepState, "exchanges" | "exchanges_omitted"> {
  const all = [...(state.exchanges ?? []), ...more];
  const omitted = state.exchanges_omitted ?? 0;
  if (all.length <= HEAD + TAIL) return { exchanges: all, exchanges_omitted: omitted };
  return { exchanges: [...all.slice(0, HEAD), ...all.slice(all.length - TAIL)], exchanges_omitted: omitted + all.length - HEAD - TAIL };
}

function exchangeJson(e: Exchange): ExchangeJson {
  return { ...e, ...(e.quirk && QUIRKS[e.quirk] ? { quirk_reason: QUIRKS[e.quirk] } : {}) };
}

const asExchanges = (v: unknown): Exchange[] => (Array.isArray(v) ? (v as Exchange[]) : []);
const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : 0);

function stepJson(name: string, label: string, r: StepRecord | undefined): ProvisioningStepJson {
  if (!r)
    return {
      name,
      label,
      status: "pending",
      started_at: null,
      finished_at: null,
      duration_ms: null,
      message: null,
      attempts: 0,
      lease_token: null,
      exchanges: [],
      exchanges_omitted: 0,
    };
  return {
    name,
    label,
    status: r.status,
    started_at: r.startedAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
    duration_ms: r.finishedAt ? r.finishedAt.getTime() - r.startedAt.getTime() : null,
    message: r.message,
    attempts: int(r.details.attempts),
    lease_token: r.leaseToken,
    exchanges: asExchanges(r.details.exchanges).map(exchangeJson),
    exchanges_omitted: int(r.details.exchanges_omitted),
  };
}

const latest = (w: ProvisioningWorkflow, name: string) => w.steps.filter((s) => s.name === name).at(-1);
const ours = (name: string) => (PROVISIONING_STEPS as readonly string[]).includes(name);

export function provisioningView(w: ProvisioningWorkflow): ProvisioningJson {
  const own = currentStep(w);
  // the steps the inspection that follows records on the same workflow (lib/handover), in order
  const after = [...new Set(w.steps.filter((s) => !ours(s.name)).map((s) => s.name))];
  const steps = [
    ...PROVISIONING_STEPS.map((name) => stepJson(name, STEP_LABELS[name], latest(w, name))),
    ...after.map((name) => stepJson(name, `Inspection: ${name.replaceAll("_", " ")}`, latest(w, name))),
  ];
  const phase = w.status !== "running" ? "ended" : own ? "redfish" : "inspection";
  const runningAfter = after.find((name) => latest(w, name)?.status === "running");
  const f = w.details.failure as { kind?: unknown; step?: unknown } | undefined;
  return {
    id: w.id,
    node_id: w.nodeId,
    status: w.status,
    image_url: typeof w.details.image_url === "string" ? w.details.image_url : "",
    requested_by: w.requestedBy,
    outcome: w.outcome,
    failure: f && isOneOf(PROVISIONING_FAILURES, f.kind) && isOneOf(PROVISIONING_STEPS, f.step) ? { kind: f.kind, step: f.step } : null,
    started_at: w.startedAt.toISOString(),
    finished_at: w.finishedAt?.toISOString() ?? null,
    phase,
    current_step: phase === "redfish" ? own!.name : phase === "inspection" ? (runningAfter ?? null) : null,
    steps,
  };
}
