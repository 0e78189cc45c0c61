import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type pg from "pg";
import { lockSession, unlockSession } from "./locks";

// Applies prisma/migrations/<timestamp>_<name>/migration.sql in order, each in its own
// transaction, and records it in Prisma's own `_prisma_migrations` table with Prisma's
// checksum (SHA-256 of the script), so `prisma migrate deploy` can take over the same
// database wherever Prisma's engine can be downloaded. An applied migration whose file
// changed afterwards is refused: write a new migration instead.

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

export function checksumOf(sql: string): string {
  return createHash("sha256").update(sql, "utf8").digest("hex");
}

/** Prisma accepts a checksum computed with either line ending, so git's conversions don't matter. */
export function matchesChecksum(sql: string, checksum: string): boolean {
  const lf = sql.replace(/\r\n/g, "\n");
  return [sql, lf, lf.replace(/\n/g, "\r\n")].some((variant) => checksumOf(variant) === checksum);
}

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory() && /^\d{14}_[a-z0-9_]+$/.test(e.name))
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: checksumOf(sql) };
    }),
  );
}

const BOOKKEEPING_DDL = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"            VARCHAR(64) NOT NULL,
    "finished_at"         TIMESTAMPTZ,
    "migration_name"      VARCHAR(255) NOT NULL,
    "logs"                TEXT,
    "rolled_back_at"      TIMESTAMPTZ,
    "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(client: pg.ClientBase, migrations: MigrationFile[]): Promise<MigrationReport> {
  const report: MigrationReport = { applied: [], alreadyApplied: [] };
  await lockSession(client, "migrations");
  try {
    await client.query(BOOKKEEPING_DDL);
    const { rows } = await client.query<AppliedRow>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"
        WHERE rolled_back_at IS NULL ORDER BY started_at`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r]));
    const known = new Set(migrations.map((m) => m.name));
    for (const row of rows) {
      if (!known.has(row.migration_name)) {
        throw new MigrationError(
          `Migration ${row.migration_name} is recorded in the database but missing from prisma/migrations. ` +
            "Restore the folder, or use a database made from this code base.",
        );
      }
    }
    for (const m of migrations) {
      const row = applied.get(m.name);
      if (row) {
        if (!row.finished_at) {
          throw new MigrationError(
            `Migration ${m.name} started earlier but never finished. Inspect the database, then mark it ` +
              `rolled back (UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = '${m.name}').`,
          );
        }
        if (!matchesChecksum(m.sql, row.checksum)) {
          throw new MigrationError(
            `Migration ${m.name} was edited after it was applied (recorded checksum ${row.checksum.slice(0, 12)}…, ` +
              `file checksum ${m.checksum.slice(0, 12)}…). Applied migrations are immutable: revert the edit and ` +
              "put the change in a new migration.",
          );
        }
        report.alreadyApplied.push(m.name);
        continue;
      }
      await applyOne(client, m);
      report.applied.push(m.name);
    }
    return report;
  } finally {
    await unlockSession(client, "migrations");
  }
}

async function applyOne(client: pg.ClientBase, m: MigrationFile): Promise<void> {
  const id = randomUUID();
  await client.query("BEGIN");
  try {
    await client.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`, [
      id,
      m.checksum,
      m.name,
    ]);
    await client.query(m.sql);
    await client.query(`UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`, [id]);
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw new MigrationError(`Migration ${m.name} failed and was rolled back: ${(e as Error).message}`);
  }
}
