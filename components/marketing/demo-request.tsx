"use client";
import { useEffect, useRef, useState } from "react";
import { requestDemoAction, earlyAccessAction } from "@/app/_actions/marketing";
import { formFields } from "@/components/forms/form-fields";
import { Field, FormMessage, SubmitButton } from "@/components/forms/form-parts";
import { useActionForm } from "@/components/forms/use-action-form";

/** "Request a demo": a native modal dialog (focus trapped, Escape closes) with the demo-request form. */
export function DemoRequestButton({ label = "Request a demo" }: { label?: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // the form exists only while its dialog is open, so several buttons on a page never duplicate it
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (open && !dialog.current?.open) dialog.current?.showModal();
  }, [open]);
  return (
    <>
      <button
        type="button"
        onClick={() => setOpen(true)}
        className="rounded-md bg-indigo-500 px-5 py-3 text-sm font-semibold text-white hover:bg-indigo-400 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-white"
      >
        {label}
      </button>
      <dialog
        ref={dialog}
        onClose={() => setOpen(false)}
        aria-labelledby="demo-title"
        className="m-auto w-full max-w-lg rounded-xl p-0 shadow-2xl backdrop:bg-slate-900/60"
      >
        {open ? <DemoRequestForm onClose={() => dialog.current?.close()} /> : null}
      </dialog>
    </>
  );
}

function DemoRequestForm({ onClose }: { onClose: () => void }) {
  const { state, dispatch, formRef } = useActionForm(requestDemoAction);
  const f = formFields(state);
  return (
    <form ref={formRef} action={dispatch} aria-label="Request a demo" className="grid gap-4 p-6">
      <div className="flex items-start justify-between gap-4">
        <div>
          <h2 id="demo-title" className="text-lg font-semibold text-slate-900">
            Request a demo
          </h2>
          <p className="mt-1 text-sm text-slate-700">Thirty minutes with an engineer, on your fleet&apos;s numbers.</p>
        </div>
        <button
          type="button"
          onClick={onClose}
          className="rounded-md px-2 py-1 text-sm text-slate-700 hover:bg-slate-100"
          aria-label="Close"
        >
          ✕
        </button>
      </div>
      <Field label="Name" {...f("name")}>
        {(p) => <input {...p} autoComplete="name" />}
      </Field>
      <Field label="Work email" {...f("email")}>
        {(p) => <input {...p} type="email" autoComplete="email" />}
      </Field>
      <Field label="Company (optional)" {...f("company")}>
        {(p) => <input {...p} autoComplete="organization" />}
      </Field>
      <Field label="Your fleet, in a sentence (optional)" {...f("message")}>
        {(p) => <textarea {...p} rows={3} placeholder="e.g. 400 H100s in two sites, 30 internal teams" />}
      </Field>
      <div className="flex items-center gap-3">
        <SubmitButton>Send request</SubmitButton>
      </div>
      <FormMessage state={state} />
    </form>
  );
}

/** The early-access signup: one field, an answer in place. */
export function EarlyAccessForm() {
  const { state, dispatch, formRef } = useActionForm(earlyAccessAction);
  const f = formFields(state, { idPrefix: "early" });
  return (
    <form ref={formRef} action={dispatch} aria-label="Early access" className="flex flex-wrap items-start gap-3">
      <div className="min-w-64 flex-1">
        <Field label="Email for early access" {...f("email")}>
          {(p) => <input {...p} type="email" autoComplete="email" placeholder="you@company.com" />}
        </Field>
      </div>
      <div className="pt-6">
        <SubmitButton variant="secondary">Join the list</SubmitButton>
      </div>
      <div className="w-full">
        <FormMessage state={state} />
      </div>
    </form>
  );
}
