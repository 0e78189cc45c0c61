"use client";
import { useEffect, useId, useRef } from "react";
import { cn } from "./cn";

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * The console's one modal: a native <dialog> opened with showModal (the page behind is inert and
 * announced as such), centred (the CSS reset takes the browser's auto margins away, so they are set
 * here), with Tab and Shift+Tab kept inside it, Escape and the backdrop closing it, and focus going
 * back to whatever had it before it opened. `initialFocus` names the element that takes focus first
 * (a confirmation focuses the safe answer, so Enter never destroys by accident).
 */
export function Dialog({
  open,
  onClose,
  title,
  description,
  children,
  initialFocus,
  className,
  testId,
}: {
  open: boolean;
  onClose: () => void;
  title: React.ReactNode;
  description?: React.ReactNode;
  children: React.ReactNode;
  initialFocus?: React.RefObject<HTMLElement | null>;
  className?: string;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const titleId = useId();
  const descriptionId = useId();
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) {
      returnTo.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      el.showModal();
      (initialFocus?.current ?? el.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    } else if (!open && el.open) {
      el.close();
    }
  }, [open, initialFocus]);
  // focus goes back where it was when the dialog closes, however it closes
  useEffect(() => {
    if (open) return;
    const to = returnTo.current;
    returnTo.current = null;
    if (to?.isConnected) to.focus();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      data-testid={testId}
      // Escape: the browser's cancel, turned into our close so React state stays the truth
      onCancel={(ev) => {
        ev.preventDefault();
        onClose();
      }}
      // a click on the backdrop lands on the dialog element itself
      onClick={(ev) => {
        if (ev.target === ev.currentTarget) onClose();
      }}
      onKeyDown={(ev) => {
        if (ev.key !== "Tab") return;
        const items = [...ev.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((e) => e.offsetParent !== null);
        if (items.length === 0) return;
        const first = items[0]!;
        const last = items.at(-1)!;
        if (ev.shiftKey && document.activeElement === first) {
          ev.preventDefault();
          last.focus();
        } else if (!ev.shiftKey && document.activeElement === last) {
          ev.preventDefault();
          first.focus();
        }
      }}
      className={cn(
        "m-auto w-[calc(100%-2rem)] max-w-lg rounded-xl bg-white p-0 text-left shadow-xl ring-1 ring-slate-200 backdrop:bg-slate-900/40",
        className,
      )}
    >
      {open ? (
        <div className="flex flex-col gap-4 p-6">
          <h2 id={titleId} className="text-lg font-semibold text-slate-900">
            {title}
          </h2>
          {description ? (
            <div id={descriptionId} className="text-sm text-slate-700">
              {description}
            </div>
          ) : null}
          {children}
        </div>
      ) : null}
    </dialog>
  );
}
