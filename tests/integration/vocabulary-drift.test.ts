import { describe, expect, inject, it } from "vitest";
import { CLOSED_COLUMNS } from "@/lib/db/closed-columns";
import { oneOf, UnknownValueError } from "@/lib/vocabulary";
import { withClient } from "../support/pg";

// The code's closed lists (lib/db/closed-columns.ts) and the migrated database's CHECK
// constraints must say the same thing, both ways: a status added to a migration and not to the
// code (or the other way round) fails here, naming the column and the values that differ.

/** Each column a CHECK constraint limits to a list, with the widest list it is given. */
async function checkedLists(): Promise<Map<string, string[]>> {
  const { rows } = await withClient(inject("databaseUrl"), (c) =>
    c.query<{ table: string; def: string }>(
      `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def
         FROM pg_constraint WHERE contype = 'c' AND conrelid <> 0 AND connamespace = 'public'::regnamespace`,
    ),
  );
  const lists = new Map<string, string[]>();
  for (const { table, def } of rows) {
    for (const m of def.matchAll(/\(?(\w+) = ANY \(ARRAY\[([^\]]*)\]\)/g)) {
      const values = [...m[2]!.matchAll(/'([^']*)'::text/g)].map((v) => v[1]!);
      const key = `${table}.${m[1]}`;
      if (values.length > (lists.get(key)?.length ?? 0)) lists.set(key, values);
    }
  }
  return lists;
}

describe("closed lists of values", () => {
  it("each constant in the code lists exactly the values its column's CHECK allows", async () => {
    const lists = await checkedLists();
    const differences = Object.entries(CLOSED_COLUMNS).flatMap(([column, code]) => {
      const db = lists.get(column);
      if (!db) return [`${column}: no CHECK lists its values`];
      const onlyCode = code.filter((v) => !db.includes(v));
      const onlyDb = db.filter((v) => !(code as readonly string[]).includes(v));
      return onlyCode.length || onlyDb.length
        ? [`${column}: only in the code ${JSON.stringify(onlyCode)}, only in the database ${JSON.stringify(onlyDb)}`]
        : [];
    });
    expect(differences).toEqual([]);
  });

  it("every column a CHECK limits to a list has its constant in the code", async () => {
    const lists = await checkedLists();
    const unregistered = [...lists.keys()].filter((column) => !(column in CLOSED_COLUMNS)).sort();
    expect(unregistered).toEqual([]);
  });

  it("narrows a value read back from the database, or names the column it does not belong to", () => {
    expect(oneOf(CLOSED_COLUMNS["jobs.status"], "running", "jobs.status")).toBe("running");
    expect(() => oneOf(CLOSED_COLUMNS["jobs.status"], "paused", "jobs.status")).toThrow(UnknownValueError);
    expect(() => oneOf(CLOSED_COLUMNS["jobs.status"], null, "jobs.status")).toThrow(/jobs\.status: null is not one of/);
  });
});
