"use client";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { formFields } from "./form-fields";
import { Field, FormMessage, SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

type Kind = "full" | "inspect" | "reenrol";

const META: Record<Kind, { label: string; verb: string; explain: string[] }> = {
  full: {
    label: "Hand over",
    verb: "Start the handover",
    explain: [
      "Whatever runs on the node is stopped (jobs go back to the queue, pods are interrupted).",
      "Its agent runs the cluster's wipe command and resets every GPU, then attests the node with its TPM.",
      "It returns to service only if it passes; a failure quarantines it and alerts.",
    ],
  },
  inspect: {
    label: "Re-inspect",
    verb: "Inspect again",
    explain: [
      "The node's agent attests it again (a fresh nonce, a new TPM quote, its boot event log) against the policy in force.",
      "It returns to service only if it passes; a failure keeps it quarantined.",
    ],
  },
  reenrol: {
    label: "Re-enrol TPM key",
    verb: "Retire the pinned key",
    explain: [
      "Only after the node's TPM or motherboard was replaced: the key it enrolled is retired (kept on record).",
      "The next attestation key the node presents is pinned in its place.",
    ],
  },
};

/**
 * The handover actions allowed on the node (computed by the server): each opens a confirmation
 * saying what it does, and a handover or re-inspection asks for the reason the audit log keeps.
 */
export function HandoverActions({
  startAction,
  reenrolAction,
  nodeId,
  hostname,
  can,
}: {
  startAction: FormAction;
  reenrolAction: FormAction;
  nodeId: string;
  hostname: string;
  can: { handover: boolean; inspect: boolean; reenrol: boolean };
}) {
  const start = useActionForm(startAction, false);
  const reenrol = useActionForm(reenrolAction, false);
  const f = formFields(start.state, { idPrefix: "handover" });
  const [kind, setKind] = useState<Kind | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  useEffect(() => {
    if (kind) dialog.current?.showModal();
  }, [kind]);
  useEffect(() => {
    if (start.state.ok || reenrol.state.ok) dialog.current?.close();
  }, [start.state, reenrol.state]);
  const kinds = (["full", "inspect", "reenrol"] as const).filter((k) =>
    k === "full" ? can.handover : k === "inspect" ? can.inspect : can.reenrol,
  );
  if (kinds.length === 0)
    return <p className="text-sm text-slate-500">No handover action applies while a workflow runs or in this state.</p>;
  const meta = kind ? META[kind] : null;
  const form = kind === "reenrol" ? reenrol : start;
  return (
    <div>
      <div className="flex flex-wrap gap-3" role="group" aria-label="Handover">
        {kinds.map((k) => (
          <Button
            key={k}
            type="button"
            variant={k === "reenrol" ? "danger" : k === "full" ? "primary" : "secondary"}
            onClick={(ev) => {
              opener.current = ev.currentTarget;
              setKind(k);
            }}
          >
            {META[k].label}…
          </Button>
        ))}
      </div>
      <div className="mt-3 space-y-2">
        <FormMessage state={start.state} />
        <FormMessage state={reenrol.state} />
      </div>
      <dialog
        ref={dialog}
        aria-labelledby="handover-action-title"
        onClose={() => {
          setKind(null);
          opener.current?.focus();
        }}
        className="w-full max-w-lg rounded-xl p-0 shadow-xl backdrop:bg-slate-900/40"
      >
        {meta && kind ? (
          <form ref={form.formRef} action={form.dispatch} className="flex flex-col gap-4 p-6" aria-label={`${meta.verb} on ${hostname}`}>
            <h2 id="handover-action-title" className="text-lg font-semibold text-slate-900">
              {meta.verb} on {hostname}?
            </h2>
            <input type="hidden" name="id" value={nodeId} />
            {kind !== "reenrol" ? <input type="hidden" name="mode" value={kind} /> : null}
            <ul className="list-disc space-y-1 pl-5 text-sm text-slate-700">
              {meta.explain.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            {kind !== "reenrol" ? (
              <Field label="Reason (required, recorded in the audit log)" {...f("reason")}>
                {(p) => (
                  <textarea
                    {...p}
                    required
                    minLength={3}
                    maxLength={500}
                    rows={2}
                    placeholder="e.g. reimaged after the failed attestation"
                  />
                )}
              </Field>
            ) : null}
            {!form.state.ok && form.state.message ? <FormMessage state={form.state} /> : null}
            <div className="flex justify-end gap-3">
              <Button type="button" variant="secondary" onClick={() => dialog.current?.close()}>
                Cancel
              </Button>
              <SubmitButton variant={kind === "reenrol" ? "danger" : "primary"}>{meta.verb}</SubmitButton>
            </div>
          </form>
        ) : null}
      </dialog>
    </div>
  );
}
