import { validationFailed } from "@/lib/errors";

/**
 * PostgreSQL's text cannot hold NUL: a string with one would fail as a 500 deep in a query. Callers
 * refuse it where input enters (the route and action wrappers), naming the field; a schema that
 * keeps binary-ish text (workload logs) replaces it before this runs. The walk is iterative, so no
 * value, however deep, can overflow the stack here (the body reader bounds nesting anyway).
 */
export function refuseNul(value: unknown, path = ""): void {
  // the usual case, nothing to refuse, costs one walk that builds no paths: on a 1,000-sample
  // metrics batch, building every field's path took a sixth of the ingest server's CPU
  if (!holdsNul(value)) return;
  const at = (base: string, k: string | number) => (typeof k === "number" ? `${base}[${k}]` : base ? `${base}.${k}` : k);
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path }];
  while (stack.length) {
    const { v, path: here } = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\u0000")) throw validationFailed([{ path: here || "body", message: "Must not contain NUL characters" }]);
    } else if (Array.isArray(v)) {
      // pushed in reverse, so the first offending item (in document order) is the one named
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: at(here, i) });
    } else if (v && typeof v === "object") {
      const entries = Object.entries(v);
      for (const [k] of entries)
        if (k.includes("\u0000"))
          throw validationFailed([{ path: here || "body", message: "Field names must not contain NUL characters" }]);
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ v: entries[i]![1], path: at(here, entries[i]![0]) });
    }
  }
}

/** Whether any string in the value, or any key of its objects, holds NUL (own enumerable keys, as Object.entries). */
function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (!value || typeof value !== "object") return false;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\u0000")) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) if (typeof x === "string" ? x.includes("\u0000") : x && typeof x === "object") stack.push(x);
    } else if (v && typeof v === "object") {
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        if (k.includes("\u0000")) return true;
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === "string" ? x.includes("\u0000") : x && typeof x === "object") stack.push(x);
      }
    }
  }
  return false;
}
