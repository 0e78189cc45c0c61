import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { registeredStatements, type Statement } from "@/lib/db/statement";
import { describeStatement, type Described } from "../support/describe-statement";
import { withClient } from "../support/pg";

// Every statement the code declares (lib/db/statement.ts) against the migrated database: its
// parameter types and its result columns (names and types) must be what PostgreSQL describes for
// its text. The statements are found by reading lib for modules that define any, so a new module
// is checked without being listed here.

const LIB = path.resolve(import.meta.dirname, "../../lib");

function libFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : libFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

const definesStatements = (file: string) => /\bstatement\(\s*["'`]/.test(readFileSync(file, "utf8"));

/** pg_type names by oid, arrays written `elem[]` as declarations write them. */
async function typeNames(c: pg.Client): Promise<Map<number, string>> {
  const { rows } = await c.query<{ oid: number; name: string }>(
    `SELECT t.oid::int AS oid, CASE WHEN t.typcategory = 'A' AND e.oid IS NOT NULL THEN e.typname || '[]' ELSE t.typname END AS name
       FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem`,
  );
  return new Map(rows.map((r) => [r.oid, r.name]));
}

/** Columns of tables that may hold NULL, as `tableOid/attnum`, to suggest `?` in a declaration. */
async function nullableColumns(c: pg.Client): Promise<Set<string>> {
  const { rows } = await c.query<{ key: string }>(
    `SELECT a.attrelid::int || '/' || a.attnum AS key FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid
      WHERE r.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attnotnull`,
  );
  return new Set(rows.map((r) => r.key));
}

const bare = (t: string) => t.replace(/\?$/, "");

/** How a statement's declaration differs from the database's description of its text. */
function differences(s: Statement, d: Described, types: Map<number, string>, nullable: Set<string> = new Set()): string[] {
  const out: string[] = [];
  const typeOf = (oid: number) => types.get(oid) ?? `oid ${oid}`;
  const params = d.params.map(typeOf);
  if (params.length !== s.params.length) out.push(`${s.name}: takes ${params.length} parameters, declares ${s.params.length}`);
  params.forEach((t, i) => {
    const declared = s.params[i];
    if (declared !== undefined && bare(declared) !== t) out.push(`${s.name}: parameter $${i + 1} is ${t}, declared ${bare(declared)}`);
  });
  const seen = new Set<string>();
  for (const f of d.fields) {
    if (seen.has(f.name)) out.push(`${s.name}: column ${f.name} appears twice in the result (the row keeps only the last)`);
    seen.add(f.name);
    const declared = s.columns[f.name];
    if (declared === undefined) out.push(`${s.name}: column ${f.name} (${typeOf(f.typeOid)}) is not declared`);
    else if (bare(declared) !== typeOf(f.typeOid))
      out.push(`${s.name}: column ${f.name} is ${typeOf(f.typeOid)}, declared ${bare(declared)}`);
  }
  for (const c of Object.keys(s.columns)) if (!seen.has(c)) out.push(`${s.name}: declared column ${c} is not in the result`);
  if (out.length) {
    const cols = d.fields.map((f) => `${f.name}: "${typeOf(f.typeOid)}${nullable.has(`${f.tableId}/${f.column}`) ? "?" : ""}"`).join(", ");
    out.push(`${s.name}: described as { params: [${params.map((t) => `"${t}"`).join(", ")}], columns: { ${cols} } }`);
  }
  return out;
}

describe("SQL statements", () => {
  let client: pg.Client;
  let release: () => void;
  let types: Map<number, string>;
  let nullable: Set<string>;
  let modules: string[];

  beforeAll(async () => {
    modules = libFiles(LIB).filter(definesStatements);
    for (const m of modules) await import(m);
    // one connection held for the whole file
    await new Promise<void>((ready) => {
      void withClient(inject("databaseUrl"), async (c) => {
        client = c;
        types = await typeNames(c);
        nullable = await nullableColumns(c);
        ready();
        await new Promise<void>((r) => (release = r));
      });
    });
  });
  afterAll(() => release?.());

  it("finds the modules that define statements, and each statement's name is unique", () => {
    // every domain's statements module is among those found (the search cannot silently miss them)
    expect(
      libFiles(LIB)
        .filter((f) => f.endsWith("statements.ts"))
        .filter((f) => !modules.includes(f)),
    ).toEqual([]);
    const names = registeredStatements().map((s) => s.name);
    expect(names.length).toBeGreaterThanOrEqual(modules.length);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("declares each statement's parameters and result columns as PostgreSQL describes them", async () => {
    const found: string[] = [];
    for (const s of registeredStatements()) {
      const d = await describeStatement(client, s.text).catch((e: Error) => e);
      if (d instanceof Error) found.push(`${s.name}: ${d.message}`);
      else found.push(...differences(s, d, types, nullable));
    }
    expect(found).toEqual([]);
  });

  it("names the statement and column of a wrong declaration", async () => {
    const text = "SELECT id, name, created_at FROM tenants WHERE id = $1";
    const wrong: Statement = {
      name: "test.wrong",
      text,
      params: ["text"],
      columns: { id: "uuid", name: "int4", created: "timestamptz" },
      prepare: false,
    };
    const found = differences(wrong, await describeStatement(client, text), types);
    expect(found.slice(0, -1)).toEqual([
      "test.wrong: parameter $1 is uuid, declared text",
      "test.wrong: column name is text, declared int4",
      "test.wrong: column created_at (timestamptz) is not declared",
      "test.wrong: declared column created is not in the result",
    ]);
    expect(found.at(-1)).toContain(`created_at: "timestamptz"`);
    await expect(describeStatement(client, "SELECT nope FROM tenants")).rejects.toThrow(/nope/);
  });
});
