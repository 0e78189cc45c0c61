import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { readSchemaSql, SCHEMA_SQL_PATH } from "../../scripts/lib/schema-sql";
import { withClient } from "../support/pg";

// prisma/schema.sql is the one place that shows the current definition of every trigger and
// function (the migrations redefine them); it must be what the migrations build, not an older copy.

describe("generated schema.sql", () => {
  it("prisma/schema.sql is what the migrations build", async () => {
    const live = await withClient(inject("databaseUrl"), readSchemaSql);
    // what the file must show: our functions and triggers, not bookkeeping or btree_gist's functions
    expect(live).toMatch(/^CREATE OR REPLACE FUNCTION public\.\w+\(/m);
    expect(live).toMatch(/^CREATE (CONSTRAINT )?TRIGGER \w+ /m);
    expect(live).not.toContain("_prisma_migrations");
    expect(live).not.toMatch(/FUNCTION public\.gbt_/);
    const stale = firstDifference(readFileSync(SCHEMA_SQL_PATH, "utf8"), live);
    expect(stale, `${SCHEMA_SQL_PATH} is stale: run \`npm run db:schema\` and commit it`).toBeUndefined();
  });
});

/** The first line that differs, with its number, so the failure says where the drift is. */
function firstDifference(expected: string, actual: string): string | undefined {
  if (expected === actual) return undefined;
  const a = expected.split("\n");
  const b = actual.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: committed ${JSON.stringify(a[i] ?? null)}, migrations build ${JSON.stringify(b[i] ?? null)}`;
  }
  return undefined;
}
