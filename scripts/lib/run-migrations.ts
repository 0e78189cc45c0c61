import path from "node:path";
import pg from "pg";
import { migrate, readMigrations, type MigrationReport } from "../../lib/db/migrations";

export const migrationsDir = path.resolve(import.meta.dirname, "..", "..", "prisma", "migrations");

export async function runMigrations(url: string): Promise<MigrationReport> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await migrate(client, await readMigrations(migrationsDir));
  } finally {
    await client.end();
  }
}
