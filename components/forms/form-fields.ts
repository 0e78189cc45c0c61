// One place that ties a form field's name to where the schema puts its error, to the value the
// action echoed after a refusal, and to the key that remounts an uncontrolled input to show it.
// `Field` takes what `f(name)` returns, so a form never looks an error up by a string of its own.
import type { ActionState } from "@/lib/auth/action";

/** What a server action answers, plus the fields edited since (useActionForm): their errors no longer show. */
export type FormState = Omit<ActionState, "data"> & { edited?: string[] };

/** What a `Field` needs from the form's last answer. */
export interface FieldBinding {
  name: string;
  /** when two forms on one page share field names */
  idPrefix?: string;
  error?: string;
  /** the value echoed after a refusal, else the field's starting value */
  defaultValue?: string;
  /** changes with every answer, so an uncontrolled input remounts showing `defaultValue` */
  at?: string;
}

type Initial = string | number | null | undefined;

export interface FormFields {
  /** An uncontrolled input: it starts with `initial`, and with what was sent after a refusal. */
  (name: string, initial?: Initial): FieldBinding;
  /**
   * The name, id and error alone, with no starting value and no remount: for an input whose value
   * the component holds in state, or a secret, which is never filled in again.
   */
  bare(name: string): FieldBinding;
  /** What a field starts with (to seed a component's state): the echoed value, else `initial`. */
  value(name: string, initial: string | number): string;
  value(name: string, initial?: Initial): string | undefined;
  /** A checkbox: after a refusal, whether it was sent (an unchecked box is not); else `initial`. */
  checked(name: string, initial: boolean): boolean;
  /** The error for a field, for parts that render it themselves. */
  error(name: string): string | undefined;
  /** The remount key, for a component that holds fields in its own state. */
  key: string;
}

export interface FormFieldsOptions {
  /** the schema object every field of the form sits under, e.g. "changes" for { id, changes } */
  under?: string;
  /** fields whose schema path is not `under.name`, e.g. { amount: "deposit.amount_cents" } */
  paths?: Record<string, string>;
  idPrefix?: string;
  /** remount also when this changes (a form whose fields depend on a choice, like a rule's type) */
  remountWith?: string;
}

export function formFields(state: FormState, options: FormFieldsOptions = {}): FormFields {
  const errors = state.fieldErrors ?? {};
  // an action echoes values only with a refusal; a success shows the starting values again
  const echoed = state.values;
  const key = options.remountWith === undefined ? String(state.at) : `${state.at}-${options.remountWith}`;
  const pathOf = (name: string) => options.paths?.[name] ?? (options.under ? `${options.under}.${name}` : name);
  // the schema's path, or the bare name (a use case's refusal may name the form's field), or the
  // first error under the path (a list's items: "ports.1")
  const error = (name: string) => {
    if (state.edited?.includes(name)) return undefined;
    const path = pathOf(name);
    return errors[path] ?? errors[name] ?? Object.entries(errors).find(([p]) => p.startsWith(`${path}.`))?.[1];
  };
  function value(name: string, initial?: Initial): string | undefined {
    return echoed?.[name] ?? (initial === null || initial === undefined ? undefined : String(initial));
  }
  const f = ((name: string, initial?: Initial): FieldBinding => ({
    name,
    idPrefix: options.idPrefix,
    error: error(name),
    defaultValue: value(name, initial),
    at: key,
  })) as FormFields;
  f.bare = (name) => ({ name, idPrefix: options.idPrefix, error: error(name) });
  f.value = value as FormFields["value"];
  f.checked = (name, initial) => (echoed ? echoed[name] === "on" : initial);
  f.error = error;
  f.key = key;
  return f;
}
