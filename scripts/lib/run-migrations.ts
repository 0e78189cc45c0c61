import path from "node:path";
import { migrate, readMigrations, type MigrationReport } from "../../lib/db/migrations";
import { withHarnessClient } from "./harness-clients";

export const migrationsDir = path.resolve(import.meta.dirname, "..", "..", "prisma", "migrations");

export async function runMigrations(url: string): Promise<MigrationReport> {
  return withHarnessClient(url, "migrations", async (client) => migrate(client, await readMigrations(migrationsDir)));
}
