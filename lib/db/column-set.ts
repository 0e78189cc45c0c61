// Set-based statements pass many rows as one array per column and turn them back into rows with
// `unnest($1::uuid[], $2::int[], …) AS x(id, n, …)`. Written by hand, the parameter numbers, the
// casts, the column names and the arrays are four lists that must line up by position. A column set
// declares each column once (name and array type) and produces the fragment and the values from
// that one declaration, so a column can never be paired with another's values.
//
// Pure and cheap (hot paths use it): one array per column, as `rows.map` made, and no object per row.

export type PgArrayType = "uuid[]" | "text[]" | "int[]" | "bigint[]" | "float8[]" | "real[]" | "boolean[]" | "timestamptz[]" | "jsonb[]";

/** What node-postgres sends for one element of each array type (null is SQL NULL). */
type Cell<T extends PgArrayType> = T extends "uuid[]" | "text[]"
  ? string | null
  : T extends "int[]" | "float8[]" | "real[]"
    ? number | null
    : T extends "bigint[]"
      ? number | string | bigint | null
      : T extends "boolean[]"
        ? boolean | null
        : T extends "timestamptz[]"
          ? Date | string | null
          : unknown;

type ColumnArrays<C extends Record<string, PgArrayType>> = { [K in keyof C]: Array<Cell<C[K]>> };
type ColumnPicks<C extends Record<string, PgArrayType>, R> = { [K in keyof C]: (row: R, i: number) => Cell<C[K]> };

interface Bound {
  /** `unnest($n::type[], …) AS alias(column, …)` */
  sql: string;
  /** one array per column, in the fragment's parameter order */
  values: unknown[][];
}

export interface ColumnSet<C extends Record<string, PgArrayType>> {
  readonly names: ReadonlyArray<keyof C & string>;
  /** The fragment with parameters numbered from `from` (the same string each time, for named statements). */
  sql(from?: number): string;
  /** Empty arrays, for a caller that fills every column in one pass over nested data. */
  empty(): ColumnArrays<C>;
  /** The fragment and the arrays in its order; refuses columns of different lengths. */
  bind(arrays: ColumnArrays<C>, from?: number): Bound;
  /** The fragment and one array per column picked from `rows`. */
  bindRows<R>(rows: readonly R[], pick: ColumnPicks<C, R>, from?: number): Bound;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * Declares the columns of an `unnest`, in order. `alias` names the row source (`x` unless given);
 * `ordinality` adds `WITH ORDINALITY` and names the position column after the declared ones.
 */
export function columnSet<const C extends Record<string, PgArrayType>>(
  columns: C,
  options: { alias?: string; ordinality?: string } = {},
): ColumnSet<C> {
  const names = Object.keys(columns) as Array<keyof C & string>;
  const types = names.map((n) => columns[n]);
  const alias = options.alias ?? "x";
  for (const id of [alias, ...names, ...(options.ordinality ? [options.ordinality] : [])]) {
    if (!IDENTIFIER.test(id)) throw new Error(`column set: ${JSON.stringify(id)} is not a plain lower-case SQL identifier`);
  }
  if (names.length === 0) throw new Error("column set: no columns");
  const tail = `${options.ordinality ? " WITH ORDINALITY" : ""} AS ${alias}(${[...names, ...(options.ordinality ? [options.ordinality] : [])].join(", ")})`;
  const fragments: string[] = [];

  function sql(from = 1): string {
    if (!Number.isInteger(from) || from < 1) throw new Error(`column set: parameters start at $1, not $${from}`);
    return (fragments[from] ??= `unnest(${types.map((t, i) => `$${from + i}::${t}`).join(", ")})${tail}`);
  }

  function bind(arrays: ColumnArrays<C>, from = 1): Bound {
    const values = new Array<unknown[]>(names.length);
    let rows = -1;
    for (let i = 0; i < names.length; i++) {
      const column = arrays[names[i]!];
      if (rows === -1) rows = column.length;
      else if (column.length !== rows) throw new Error(`column set: ${names[i]} has ${column.length} values, ${names[0]} has ${rows}`);
      values[i] = column;
    }
    return { sql: sql(from), values };
  }

  return {
    names,
    sql,
    empty() {
      const arrays = {} as ColumnArrays<C>;
      for (const n of names) arrays[n] = [];
      return arrays;
    },
    bind,
    bindRows(rows, pick, from = 1) {
      const arrays = {} as ColumnArrays<C>;
      for (const n of names) {
        const get = pick[n];
        const column = new Array(rows.length);
        for (let i = 0; i < rows.length; i++) column[i] = get(rows[i]!, i);
        arrays[n] = column;
      }
      return bind(arrays, from);
    },
  };
}
