"use client";
import { Fragment } from "react";
import { useFormStatus } from "react-dom";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import type { FieldBinding, FormState } from "./form-fields";

export const inputClass =
  "block w-full rounded-md border-0 bg-white px-3 py-2 text-sm text-slate-900 shadow-sm ring-1 ring-inset ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-inset focus:ring-indigo-600 aria-[invalid=true]:ring-red-400";

/**
 * A labelled input with its error or hint tied to it. Give it what `formFields(state)(name)` returns:
 * the input gets the echoed value as its default and remounts with each answer to show it.
 */
export function Field({
  label,
  name,
  error,
  hint,
  idPrefix = "f",
  defaultValue,
  at,
  children,
}: FieldBinding & {
  label: string;
  hint?: string;
  children: (props: {
    id: string;
    name: string;
    "aria-invalid": boolean;
    "aria-describedby"?: string;
    className: string;
    defaultValue?: string;
  }) => React.ReactNode;
}) {
  const id = `${idPrefix}-${name}`;
  const describedBy = error ? `${id}-error` : hint ? `${id}-hint` : undefined;
  return (
    <div>
      <label htmlFor={id} className="mb-1 block text-sm font-medium text-slate-800">
        {label}
      </label>
      <Fragment key={at}>
        {children({ id, name, "aria-invalid": Boolean(error), "aria-describedby": describedBy, className: inputClass, defaultValue })}
      </Fragment>
      {error ? (
        <p id={`${id}-error`} className="mt-1 text-xs text-red-600">
          {error}
        </p>
      ) : hint ? (
        <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
          {hint}
        </p>
      ) : null}
    </div>
  );
}

export function SubmitButton({
  children,
  variant = "primary",
  size,
  name,
  value,
}: {
  children: React.ReactNode;
  variant?: "primary" | "secondary" | "danger" | "destructive";
  size?: "sm" | "md";
  name?: string;
  value?: string;
}) {
  const { pending } = useFormStatus();
  // aria-disabled rather than disabled while pending: a disabled button loses keyboard focus to the
  // page body; this one keeps it (and ignores further clicks until the answer comes)
  return (
    <Button
      type="submit"
      variant={variant}
      size={size}
      aria-disabled={pending}
      aria-busy={pending}
      name={name}
      value={value}
      onClick={(ev) => {
        if (pending) ev.preventDefault();
      }}
      className={pending ? "cursor-wait opacity-60" : undefined}
    >
      {pending ? "Working…" : children}
    </Button>
  );
}

export function FormMessage({ state }: { state: FormState }) {
  if (!state.message) return null;
  return (
    <p
      role="status"
      data-testid="form-message"
      data-ok={state.ok ? "true" : "false"}
      className={cn("rounded-md px-3 py-2 text-sm", state.ok ? "bg-emerald-50 text-emerald-800" : "bg-red-50 text-red-700")}
    >
      {state.message}
    </p>
  );
}
