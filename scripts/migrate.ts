// `npm run db:migrate`: applies prisma/migrations to DATABASE_URL, or to the embedded database
// under .data/ when DATABASE_URL is not set.
import path from "node:path";
import { withDatabaseUrl } from "./lib/database-url";
import { runMigrations } from "./lib/run-migrations";

await withDatabaseUrl(async (url) => {
  const report = await runMigrations(url);
  for (const name of report.applied) console.log(`applied   ${name}`);
  console.log(
    `${report.applied.length} migration(s) applied, ${report.alreadyApplied.length} already up to date ` +
      `(${path.relative(process.cwd(), "prisma/migrations")}).`,
  );
}).catch((e: unknown) => {
  console.error(`db:migrate failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
