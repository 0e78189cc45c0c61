"use client";
import { useActionState, useEffect, useRef } from "react";
import type { FormState } from "./form-parts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- forms that ignore `data` accept any action
export type FormAction<T = any> = (prev: FormState & { data?: T }, form: FormData) => Promise<FormState & { data?: T }>;

/** useActionState plus a form ref that is cleared after a successful submit. */
export function useActionForm<T>(action: FormAction<T>, resetOnSuccess = true) {
  const [state, dispatch] = useActionState(action, {} as FormState & { data?: T });
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (state.ok && resetOnSuccess) formRef.current?.reset();
  }, [state, resetOnSuccess]);
  return { state, dispatch, formRef };
}
