"use client";
import { useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

const LABELS: Record<string, { label: string; verb: string; variant: "primary" | "secondary" | "danger" }> = {
  draining: { label: "Drain", verb: "Drain", variant: "secondary" },
  maintenance: { label: "Maintenance", verb: "Send to maintenance", variant: "secondary" },
  quarantined: { label: "Quarantine", verb: "Quarantine", variant: "danger" },
  available: { label: "Return to service", verb: "Return to service", variant: "primary" },
};

/**
 * The lifecycle actions allowed from the node's current state (computed by the server). Each opens
 * a confirmation that says what the action does to the work on the node (computed by the server
 * too) and asks for the reason that goes into the audit log and the node's history.
 */
export function NodeActions({
  action,
  nodeId,
  hostname,
  allowed,
  impact,
}: {
  action: FormAction;
  nodeId: string;
  hostname: string;
  allowed: string[];
  impact: Record<string, string[]>;
}) {
  const { state, dispatch, formRef } = useActionForm(action, false);
  const f = formFields(state, { under: "change", idPrefix: "node" });
  const [target, setTarget] = useState<string | null>(null);
  useEffect(() => {
    if (state.ok) setTarget(null);
  }, [state]);
  if (allowed.length === 0) return <p className="text-sm text-slate-500">No operator action applies in this state.</p>;
  const meta = target ? LABELS[target]! : null;
  return (
    <div>
      <div className="flex flex-wrap gap-3" role="group" aria-label="Node lifecycle">
        {allowed.map((t) => (
          <Button key={t} type="button" variant={LABELS[t]!.variant} aria-haspopup="dialog" onClick={() => setTarget(t)}>
            {LABELS[t]!.label}…
          </Button>
        ))}
      </div>
      <div className="mt-3">
        <FormMessage state={state} />
      </div>
      <Dialog
        open={Boolean(meta && target)}
        onClose={() => setTarget(null)}
        title={meta ? `${meta.verb} ${hostname}?` : ""}
        testId="node-action-dialog"
      >
        {meta && target ? (
          <form ref={formRef} action={dispatch} className="flex flex-col gap-4" aria-label={`${meta.verb} ${hostname}`}>
            <input type="hidden" name="id" value={nodeId} />
            <input type="hidden" name="status" value={target} />
            <ul className="list-disc space-y-1 pl-5 text-sm text-slate-700" data-testid="node-action-impact">
              {(impact[target] ?? []).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            <Field label="Reason (required, recorded in the audit log)" {...f("reason")}>
              {(p) => (
                <textarea {...p} required minLength={3} maxLength={500} rows={2} placeholder="e.g. firmware update, XID 79 inspection" />
              )}
            </Field>
            {!state.ok && state.message ? <FormMessage state={state} /> : null}
            <div className="flex flex-wrap justify-end gap-3">
              <Button type="button" variant="secondary" onClick={() => setTarget(null)}>
                Keep as is
              </Button>
              <SubmitButton variant={meta.variant === "danger" ? "destructive" : "primary"}>{meta.verb}</SubmitButton>
            </div>
          </form>
        ) : null}
      </Dialog>
    </div>
  );
}
