// `npm run db:seed`: migrates, then seeds the demo tenants, accounts and clusters (idempotent).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { disconnectDb } from "@/lib/db/client";
import { seedDemo } from "@/lib/platform/seed-demo";
import { repoRoot, withDatabaseUrl } from "./lib/database-url";
import { runMigrations } from "./lib/run-migrations";

export async function migrateAndSeed(url: string): Promise<void> {
  await runMigrations(url);
  process.env.DATABASE_URL = url;
  const result = await seedDemo();
  if (result.seeded) {
    // Agent keys exist only as hashes in the database; the demo simulator reads them from here.
    const file = path.join(repoRoot, ".data", "demo-agent-keys.json");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(result.agentKeys, null, 2), { mode: 0o600 });
    console.log("[seed] demo tenants, accounts and clusters created");
  } else {
    console.log("[seed] demo data already present");
  }
  await disconnectDb();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await withDatabaseUrl((url) => migrateAndSeed(url)).catch((e: unknown) => {
    console.error(`db:seed failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
