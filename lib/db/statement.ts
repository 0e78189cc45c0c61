import pg from "pg";
import type { SqlClient } from "./client";

// Raw SQL as named constants with declared shapes: each statement says which PostgreSQL types
// its parameters take and which columns (name, type, nullability) its rows have, and the row
// type callers see is derived from that declaration instead of cast. Every statement registers
// itself, and tests/integration/sql-statements.test.ts asks the migrated database to describe
// each one (parse and describe, never execute) and compares its answer with the declaration, so a
// renamed, missing, extra or retyped column or parameter fails a test instead of a caller.
//
// Types are PostgreSQL's type names (pg_type.typname; arrays as `uuid[]`), a trailing `?` where
// the value can be null. JavaScript shapes are those node-postgres gives without custom parsers:
// int8 and numeric arrive as strings (exact), timestamps and dates as Date, json as parsed.

/** What JSON.parse can answer: pg and Prisma both parse json and jsonb columns. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

interface ScalarTypes {
  bool: boolean;
  int2: number;
  int4: number;
  int8: string;
  oid: number;
  float4: number;
  float8: number;
  numeric: string;
  text: string;
  varchar: string;
  bpchar: string;
  name: string;
  uuid: string;
  citext: string;
  inet: string;
  timestamptz: Date;
  timestamp: Date;
  date: Date;
  json: JsonValue;
  jsonb: JsonValue;
  bytea: Buffer;
  void: string;
}
type Scalar = keyof ScalarTypes;
type PgType = Scalar | `${Scalar}[]`;
/** A column or parameter type: `uuid`, `int4[]`, `text?` (nullable). */
type Declared = PgType | `${PgType}?`;

/** What node-postgres answers for a column of this type. */
type ColumnValue<T extends Declared> = T extends `${infer B extends PgType}?`
  ? ColumnValue<B> | null
  : T extends `${infer E extends Scalar}[]`
    ? Array<ScalarTypes[E]>
    : T extends Scalar
      ? ScalarTypes[T]
      : never;

/** What a caller may pass for a parameter of this type (pg serialises numbers, dates and arrays). */
interface ParamTypes extends Omit<ScalarTypes, "int8" | "numeric" | "timestamptz" | "timestamp" | "date" | "json" | "jsonb"> {
  json: unknown;
  jsonb: unknown;
  int8: number | string | bigint;
  numeric: number | string;
  timestamptz: Date | string;
  timestamp: Date | string;
  date: Date | string;
}
type ParamValue<T extends Declared> = T extends `${infer B extends PgType}?`
  ? ParamValue<B> | null
  : T extends `${infer E extends Scalar}[]`
    ? ReadonlyArray<ParamTypes[E] | null>
    : T extends Scalar
      ? ParamTypes[T]
      : never;

export type Columns = Readonly<Record<string, Declared>>;
export type Params = readonly Declared[];

export interface Statement<P extends Params = Params, C extends Columns = Columns> {
  /** Unique across the code base: `<domain>.<what it does>`. */
  readonly name: string;
  readonly text: string;
  readonly params: P;
  readonly columns: C;
  /** Prepared by name on each pg connection it runs on (hot statements run many times). */
  readonly prepare: boolean;
}

/** The row a statement's declaration promises. */
export type RowOf<S extends Statement> = S extends Statement<Params, infer C> ? { -readonly [K in keyof C]: ColumnValue<C[K]> } : never;
/** The values a statement takes, in the order of its `$n` parameters. */
type ValuesOf<S extends Statement> = S extends Statement<infer P, Columns> ? { -readonly [I in keyof P]: ParamValue<P[I]> } : never;

// Read by the statements test only. A module a dev server re-evaluates on a hot reload adds its
// statements again, which nothing here minds.
const registry: Statement[] = [];

/** Every statement defined by a module that has been imported. */
export function registeredStatements(): readonly Statement[] {
  return registry;
}

/** Defines (and registers) a statement. Declare `columns: {}` for a statement that returns no rows. */
export function statement<const P extends Params, const C extends Columns>(
  name: string,
  def: { params: P; columns: C; text: string; prepare?: boolean },
): Statement<P, C> {
  const s: Statement<P, C> = { name, text: def.text, params: def.params, columns: def.columns, prepare: def.prepare ?? false };
  registry.push(s);
  return s;
}

/** Prisma's client or an interactive transaction: statements run through its raw queries. */
interface PrismaRaw {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}
/** A pg pool or client, a Prisma client or transaction, or txClient(tx). */
export type Runner = pg.Pool | pg.PoolClient | pg.Client | PrismaRaw | SqlClient;
type Values<S extends Statement> = ValuesOf<S> extends readonly [] ? [] : [values: ValuesOf<S>];

const isPg = (c: Runner): c is pg.Pool | pg.Client => c instanceof pg.Pool || c instanceof pg.Client;
const isPrisma = (c: Runner): c is PrismaRaw => "$queryRawUnsafe" in c;

// Prisma's raw queries answer int8 as bigint and numeric as a Decimal, where pg answers strings:
// the declared shape holds for every kind of client once those are strings.
const TEXTUAL = new Set<Declared>(["int8", "int8?", "numeric", "numeric?"]);

/** Runs a statement and returns its rows, typed as declared. */
export async function run<S extends Statement>(client: Runner, s: S, ...values: Values<S>): Promise<Array<RowOf<S>>> {
  const params: unknown[] = values[0] ?? [];
  let rows: Array<Record<string, unknown>>;
  if (isPg(client))
    rows = (await (s.prepare ? client.query({ name: s.name, text: s.text, values: params }) : client.query(s.text, params))).rows;
  else if (isPrisma(client)) rows = await client.$queryRawUnsafe<Array<Record<string, unknown>>>(s.text, ...params);
  else rows = (await client.query(s.text, params)).rows;
  if (!isPg(client)) {
    const textual = Object.keys(s.columns).filter((c) => TEXTUAL.has(s.columns[c]!));
    if (textual.length)
      for (const r of rows)
        for (const c of textual) if (r[c] !== null && typeof r[c] !== "string") r[c] = (r[c] as { toString(): string }).toString();
  }
  return rows as Array<RowOf<S>>;
}

/** The first row, or undefined when the statement returned none. */
export async function runOne<S extends Statement>(client: Runner, s: S, ...values: Values<S>): Promise<RowOf<S> | undefined> {
  return (await run(client, s, ...values))[0];
}

/** Runs a statement for its effect and returns how many rows it changed. */
export async function runCount<S extends Statement>(
  client: pg.Pool | pg.PoolClient | pg.Client | PrismaRaw,
  s: S,
  ...values: Values<S>
): Promise<number> {
  const params: unknown[] = values[0] ?? [];
  if (isPrisma(client)) return client.$executeRawUnsafe(s.text, ...params);
  return (await client.query(s.text, params)).rowCount ?? 0;
}
