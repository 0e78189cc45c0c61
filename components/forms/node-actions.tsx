"use client";
import { FormMessage, inputClass, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

const LABELS: Record<string, { label: string; variant: "primary" | "secondary" | "danger"; confirm?: string }> = {
  draining: { label: "Drain", variant: "secondary" },
  maintenance: { label: "Maintenance", variant: "secondary" },
  quarantined: { label: "Quarantine", variant: "danger", confirm: "Quarantine this node? It takes no new work until an operator returns it." },
  available: { label: "Return to service", variant: "primary", confirm: "Return this node to service? Its GPUs' hardware flags are cleared: do this after inspection." },
};

/** The lifecycle actions allowed from the node's current state (computed by the server). */
export function NodeActions({ action, nodeId, allowed }: { action: FormAction; nodeId: string; allowed: string[] }) {
  const { state, dispatch } = useActionForm(action, false);
  if (allowed.length === 0) return <p className="text-sm text-slate-500">No operator action applies in this state.</p>;
  return (
    <form
      action={dispatch}
      className="flex flex-wrap items-end gap-3"
      aria-label="Node lifecycle"
      onSubmit={(ev) => {
        const target = (ev.nativeEvent as SubmitEvent).submitter?.getAttribute("value") ?? "";
        const c = LABELS[target]?.confirm;
        if (c && !confirm(c)) ev.preventDefault();
      }}
    >
      <input type="hidden" name="id" value={nodeId} />
      <div className="min-w-64 flex-1">
        <label htmlFor="node-reason" className="mb-1 block text-sm font-medium text-slate-800">Reason (recorded)</label>
        <input id="node-reason" name="reason" className={inputClass} placeholder="e.g. firmware update, XID 79 inspection" maxLength={500} />
      </div>
      {allowed.map((target) => (
        <SubmitButtonFor key={target} target={target} />
      ))}
      <div className="w-full"><FormMessage state={state} /></div>
    </form>
  );
}

function SubmitButtonFor({ target }: { target: string }) {
  const meta = LABELS[target]!;
  return (
    <span className="contents">
      <SubmitButtonNamed value={target} variant={meta.variant}>{meta.label}</SubmitButtonNamed>
    </span>
  );
}

function SubmitButtonNamed({ value, variant, children }: { value: string; variant: "primary" | "secondary" | "danger"; children: React.ReactNode }) {
  // a named submit button carries the target status in the form data
  return <SubmitButton variant={variant} name="status" value={value}>{children}</SubmitButton>;
}
