import { validationFailed } from "@/lib/errors";

/**
 * PostgreSQL's text cannot hold NUL: a string with one would fail as a 500 deep in a query. Callers
 * refuse it where input enters (the route and action wrappers), naming the field; a schema that
 * keeps binary-ish text (workload logs) replaces it before this runs.
 */
export function refuseNul(value: unknown, path = ""): void {
  const at = (k: string | number) => (typeof k === "number" ? `${path}[${k}]` : path ? `${path}.${k}` : k);
  if (typeof value === "string") {
    if (value.includes("\u0000")) throw validationFailed([{ path: path || "body", message: "Must not contain NUL characters" }]);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => refuseNul(v, at(i)));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes("\u0000")) throw validationFailed([{ path: path || "body", message: "Field names must not contain NUL characters" }]);
      refuseNul(v, at(k));
    }
  }
}
