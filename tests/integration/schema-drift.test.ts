import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, inject, it } from "vitest";
import { withClient } from "../support/pg";

// The Prisma schema and the hand-written migrations describe the same database twice. This test
// reads the schema's models (Prisma's own DMMF) and the live columns of the migrated database and
// fails on any difference: a missing table or column, an extra one, or a nullability mismatch.

const require = createRequire(import.meta.url);
const wasm = require("@prisma/prisma-schema-wasm") as { get_dmmf(params: string): string };

interface DmmfField {
  name: string;
  dbName: string | null;
  kind: string;
  isList: boolean;
  isRequired: boolean;
  type: string;
  nativeType: [string, string[]] | null;
}

const PG_TYPES: Record<string, string[]> = {
  String: ["text", "uuid", "character varying"],
  Int: ["integer"],
  BigInt: ["bigint"],
  Boolean: ["boolean"],
  DateTime: ["timestamp with time zone"],
  Json: ["jsonb"],
  Float: ["double precision"],
  Decimal: ["numeric"],
  Bytes: ["bytea"],
};

// @db.* native types, where a model names one
const NATIVE_TYPES: Record<string, string> = {
  Uuid: "uuid",
  Real: "real",
  Timestamptz: "timestamp with time zone",
  Text: "text",
  Integer: "integer",
  BigInt: "bigint",
  DoublePrecision: "double precision",
};

describe("schema drift", () => {
  it("the Prisma schema matches the migrated database column for column", async () => {
    const dmmf = JSON.parse(
      wasm.get_dmmf(JSON.stringify({ prismaSchema: [["schema.prisma", readFileSync("prisma/schema.prisma", "utf8")]] })),
    ) as { datamodel: { models: Array<{ name: string; dbName: string | null; fields: DmmfField[] }> } };

    const expected = new Map<string, Map<string, DmmfField>>();
    for (const m of dmmf.datamodel.models) {
      const cols = new Map<string, DmmfField>();
      for (const f of m.fields) if (f.kind === "scalar" || f.kind === "enum") cols.set(f.dbName ?? f.name, f);
      expected.set(m.dbName ?? m.name, cols);
    }

    const live = await withClient(inject("databaseUrl"), (c) =>
      c.query<{ table_name: string; column_name: string; is_nullable: string; data_type: string }>(
        `SELECT table_name, column_name, is_nullable, data_type FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
      ),
    );
    const actual = new Map<string, Map<string, { nullable: boolean; type: string }>>();
    for (const r of live.rows) {
      if (!actual.has(r.table_name)) actual.set(r.table_name, new Map());
      actual.get(r.table_name)!.set(r.column_name, { nullable: r.is_nullable === "YES", type: r.data_type });
    }

    const problems: string[] = [];
    for (const table of actual.keys())
      if (!expected.has(table)) problems.push(`table ${table} exists in the database but has no Prisma model`);
    for (const [table, cols] of expected) {
      const liveCols = actual.get(table);
      if (!liveCols) {
        problems.push(`model for ${table} has no table in the database`);
        continue;
      }
      for (const col of liveCols.keys())
        if (!cols.has(col)) problems.push(`${table}.${col} exists in the database but not in the Prisma schema`);
      for (const [col, field] of cols) {
        const c = liveCols.get(col);
        if (!c) {
          problems.push(`${table}.${col} is in the Prisma schema but not in the database`);
          continue;
        }
        if (c.nullable === field.isRequired)
          problems.push(
            `${table}.${col}: Prisma says ${field.isRequired ? "required" : "optional"}, database says ${c.nullable ? "NULL" : "NOT NULL"}`,
          );
        const native = field.nativeType ? NATIVE_TYPES[field.nativeType[0]] : undefined;
        const want = field.isList ? ["ARRAY"] : native ? [native] : (PG_TYPES[field.type] ?? []);
        if (!want.includes(c.type)) problems.push(`${table}.${col}: Prisma type ${field.type}, database type ${c.type}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
