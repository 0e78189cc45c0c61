"use client";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Dialog } from "@/components/ui/dialog";
import { SubmitButton } from "./form-parts";
import { useActionForm, type FormAction } from "./use-action-form";

type Variant = "primary" | "secondary" | "danger";

/** What the confirmation says: the question, what happens, and both answers in words (never "OK"). */
export interface Confirmation {
  title: string;
  body?: React.ReactNode;
  /** the button that does it, naming the action: "Cancel job" */
  confirmLabel: string;
  /** the button that leaves things as they are, naming what stays: "Keep running" */
  keepLabel: string;
}

/**
 * A one-button action on one object (cancel a job, delete an endpoint, revoke a key) that asks first
 * in the product's own dialog, never the browser's confirm(), whose "Cancel / OK" reads backwards
 * when the action is itself a cancel. The dialog stays open with the button working until the
 * answer comes, then closes; a refusal shows beside the button. `confirm: null` acts at once (a
 * start, a harmless toggle).
 */
export function ConfirmedAction({
  action,
  fields,
  label,
  variant = "danger",
  size = "sm",
  confirm,
  showSuccess = false,
  className,
}: {
  action: FormAction;
  fields: Record<string, string>;
  label: string;
  variant?: Variant;
  size?: "sm" | "md";
  confirm: Confirmation | null;
  /** say the action's message when it worked too (when the object stays on the page) */
  showSuccess?: boolean;
  className?: string;
}) {
  const { state, dispatch } = useActionForm(action, false);
  const [open, setOpen] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  // the answer closes the dialog; what it said shows beside the button
  useEffect(() => {
    if (state.at !== undefined) setOpen(false);
  }, [state.at]);
  const say = state.message && (!state.ok || showSuccess) ? state.message : null;
  return (
    <form action={dispatch} className={cn("inline-flex flex-wrap items-center gap-2", className)}>
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      {confirm ? (
        <Button type="button" variant={variant} size={size} aria-haspopup="dialog" onClick={() => setOpen(true)}>
          {label}
        </Button>
      ) : (
        <SubmitButton variant={variant} size={size}>
          {label}
        </SubmitButton>
      )}
      {say ? (
        <span role="status" className={cn("text-xs", state.ok ? "text-emerald-700" : "text-red-600")}>
          {say}
        </span>
      ) : null}
      {confirm ? (
        <Dialog
          open={open}
          onClose={() => setOpen(false)}
          title={confirm.title}
          description={confirm.body}
          initialFocus={keep}
          testId="confirm-dialog"
        >
          <div className="flex flex-wrap justify-end gap-3">
            <Button ref={keep} type="button" variant="secondary" onClick={() => setOpen(false)}>
              {confirm.keepLabel}
            </Button>
            <SubmitButton variant={variant === "danger" ? "destructive" : "primary"}>{confirm.confirmLabel}</SubmitButton>
          </div>
        </Dialog>
      ) : null}
    </form>
  );
}
