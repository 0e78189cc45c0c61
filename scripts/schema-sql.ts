// `npm run db:schema`: migrates a throw-away database and writes prisma/schema.sql, the current
// definition of every table, view, index, function and trigger. On DATABASE_URL's server it uses a
// scratch database there (dropped afterwards); otherwise a throw-away embedded server.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dropDatabase, ensureDatabase, freePort, startEmbeddedDatabase, withDatabase } from "./lib/embedded-db";
import { withHarnessClient } from "./lib/harness-clients";
import { runMigrations } from "./lib/run-migrations";
import { readSchemaSql, SCHEMA_SQL_PATH } from "./lib/schema-sql";

const repoRoot = path.resolve(import.meta.dirname, "..");

async function generate(): Promise<string> {
  let serverUrl = process.env.DATABASE_URL ? withDatabase(process.env.DATABASE_URL, "postgres") : undefined;
  let tempDir: string | undefined;
  let discard: (() => Promise<void>) | undefined;
  if (!serverUrl) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-schema-"));
    const server = await startEmbeddedDatabase({
      dataDir: path.join(tempDir, "pg"),
      port: await freePort(),
      fast: true,
      ephemeral: true,
      log: () => {},
    });
    serverUrl = server.serverUrl;
    discard = () => server.discard();
  }
  const name = `gpuforge_schema_${process.pid}`;
  try {
    const url = await ensureDatabase(serverUrl, name);
    await runMigrations(url);
    return await withHarnessClient(url, "schema", (client) => readSchemaSql(client));
  } finally {
    await dropDatabase(serverUrl, name).catch(() => {});
    await discard?.();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

try {
  const sql = await generate();
  writeFileSync(path.join(repoRoot, SCHEMA_SQL_PATH), sql);
  console.log(`wrote ${SCHEMA_SQL_PATH} (${sql.split("\n").length} lines)`);
} catch (e) {
  console.error(`db:schema failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
