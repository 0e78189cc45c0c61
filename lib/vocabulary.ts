// Closed lists of values (statuses, kinds, roles) stored in text columns. The database holds each
// list in a CHECK constraint and the code in one `as const` array per column (registered in
// lib/db/closed-columns.ts, compared with the CHECKs by tests/integration/vocabulary-drift.test.ts).
// A value read back from the database is narrowed with `oneOf`, never cast: a value the code does
// not know is a bug to report where it is read, not a string to pass along as if it were known.

export class UnknownValueError extends Error {
  constructor(
    readonly column: string,
    readonly value: unknown,
  ) {
    super(`${column}: ${JSON.stringify(value)} is not one of the values this code knows`);
  }
}

/** `raw` as a member of `values`, or an UnknownValueError naming the column. */
export function oneOf<const T extends readonly string[]>(values: T, raw: unknown, column: string): T[number] {
  if (typeof raw === "string" && (values as readonly string[]).includes(raw)) return raw as T[number];
  throw new UnknownValueError(column, raw);
}

/** Whether `raw` is a member of `values` (for filters and optional narrowing). */
export function isOneOf<const T extends readonly string[]>(values: T, raw: unknown): raw is T[number] {
  return typeof raw === "string" && (values as readonly string[]).includes(raw);
}
