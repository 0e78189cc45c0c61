"use client";
import { useActionState, useEffect, useMemo, useRef, useState } from "react";
import type { FormFields, FormState } from "./form-fields";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- forms that ignore `data` accept any action
export type FormAction<T = any> = (prev: FormState & { data?: T }, form: FormData) => Promise<FormState & { data?: T }>;

/**
 * useActionState plus a form ref that is cleared after a successful submit. A field's error goes
 * away as soon as the field is edited (not at the next submit), so a message never contradicts
 * what the person has since typed.
 */
export function useActionForm<T>(action: FormAction<T>, resetOnSuccess = true) {
  const [raw, dispatch] = useActionState(action, {} as FormState & { data?: T });
  const formRef = useRef<HTMLFormElement>(null);
  const [edited, setEdited] = useState<{ at: number | undefined; names: string[] }>({ at: undefined, names: [] });
  useEffect(() => {
    if (raw.ok && resetOnSuccess) formRef.current?.reset();
  }, [raw, resetOnSuccess]);
  useEffect(() => {
    const form = formRef.current;
    if (!form) return;
    const onInput = (e: Event) => {
      const name = (e.target as HTMLInputElement | null)?.name;
      if (!name) return;
      // after React has handled the same event: re-rendering from inside its dispatch would put a
      // controlled input back to its old value before React saw the new one
      setTimeout(
        () =>
          setEdited((cur) =>
            cur.at === raw.at
              ? cur.names.includes(name)
                ? cur
                : { at: raw.at, names: [...cur.names, name] }
              : { at: raw.at, names: [name] },
          ),
        0,
      );
    };
    form.addEventListener("input", onInput);
    form.addEventListener("change", onInput);
    return () => {
      form.removeEventListener("input", onInput);
      form.removeEventListener("change", onInput);
    };
  }, [raw.at]);
  const state = useMemo(() => {
    if (!raw.fieldErrors || edited.at !== raw.at || edited.names.length === 0) return raw;
    // errors are keyed by the schema's paths ("changes.gpu_quota"); a field clears the ones ending in its
    // name here, and formFields hides every error of an edited field by its own path (renamed fields,
    // list items such as "ports.1")
    const fieldErrors = Object.fromEntries(
      Object.entries(raw.fieldErrors).filter(([path]) => !edited.names.some((n) => path === n || path.endsWith(`.${n}`))),
    );
    return { ...raw, fieldErrors, edited: edited.names };
  }, [raw, edited]);
  return { state, dispatch, formRef };
}

/**
 * A field the form reads while it is being edited: a choice that decides which other fields show
 * (a rule's type, a key's scope and expiry) or a number an estimate follows. It is what the field
 * shows: `initial` at first, what was sent after a refusal, `initial` again after a success (re-read
 * with every answer, as every field of `formFields` is). Bind the input uncontrolled, with
 * `f(name, initial)` and `onChange={(e) => set(e.target.value)}`: it remounts with each answer
 * showing that same value. A controlled select cannot be trusted here: React resets a form after
 * its action, which puts a controlled select back on its first option without telling React, so
 * the box showed one type while the form's state (and the fields below) held another (issue 32).
 */
export function useLiveField(f: FormFields, name: string, initial: string): [string, (value: string) => void] {
  const [edited, setEdited] = useState<{ key: string; value: string } | null>(null);
  const value = edited && edited.key === f.key ? edited.value : f.value(name, initial);
  return [value, (next: string) => setEdited({ key: f.key, value: next })];
}
