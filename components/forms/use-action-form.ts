"use client";
import { useActionState, useEffect, useMemo, useRef, useState } from "react";
import type { FormState } from "./form-fields";

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
