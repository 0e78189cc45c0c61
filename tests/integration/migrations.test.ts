import { cp, mkdtemp, writeFile, mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checksumOf, migrate, MigrationError, readMigrations } from "@/lib/db/migrations";
import { migrationsDir, runMigrations } from "../../scripts/lib/run-migrations";
import { scratchDatabase, withClient } from "../support/pg";

async function copyMigrations(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "gf-migrations-"));
  await cp(migrationsDir, dir, { recursive: true });
  return dir;
}

describe("migration runner", () => {
  it("applies every migration once, in order, with Prisma's bookkeeping and checksums", async () => {
    const url = await scratchDatabase("fresh");
    const first = await runMigrations(url);
    const files = await readMigrations(migrationsDir);
    expect(first.applied).toEqual(files.map((f) => f.name));
    const second = await runMigrations(url);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toEqual(files.map((f) => f.name));

    const rows = await withClient(url, (c) =>
      c.query(
        `SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
      ),
    );
    expect(rows.rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, r] of rows.rows.entries()) {
      expect(r.checksum).toBe(checksumOf(files[i]!.sql));
      expect(r.finished_at).toBeInstanceOf(Date);
      expect(r.applied_steps_count).toBe(1);
      expect(r.rolled_back_at).toBeNull();
    }
  });

  it("refuses an applied migration that was edited, naming it", async () => {
    const url = await scratchDatabase("edited");
    const dir = await copyMigrations();
    await withClient(url, async (c) => migrate(c, await readMigrations(dir)));
    const [first] = await readMigrations(dir);
    const file = path.join(dir, first!.name, "migration.sql");
    await writeFile(file, (await readFile(file, "utf8")) + "\n-- sneaky edit\n");
    const err = await withClient(url, async (c) => migrate(c, await readMigrations(dir)).catch((e) => e));
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toContain(first!.name);
    expect(err.message).toMatch(/edited after it was applied/);
  });

  it("rolls a failing migration back completely and records nothing", async () => {
    const url = await scratchDatabase("failing");
    const dir = await copyMigrations();
    const bad = path.join(dir, "29991231000000_broken");
    await mkdir(bad);
    await writeFile(path.join(bad, "migration.sql"), "CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n");
    const err = await withClient(url, async (c) => migrate(c, await readMigrations(dir)).catch((e) => e));
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toContain("29991231000000_broken");
    await withClient(url, async (c) => {
      expect((await c.query(`SELECT to_regclass('half_done') AS t`)).rows[0].t).toBeNull();
      const recorded = await c.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = '29991231000000_broken'`);
      expect(recorded.rowCount).toBe(0);
      expect((await c.query(`SELECT to_regclass('tenants') AS t`)).rows[0].t).toBe("tenants");
    });
  });

  it("lets parallel runners race safely: each migration is applied exactly once", async () => {
    const url = await scratchDatabase("race");
    const reports = await Promise.all([runMigrations(url), runMigrations(url), runMigrations(url)]);
    const files = await readMigrations(migrationsDir);
    expect(reports.flatMap((r) => r.applied).sort()).toEqual(files.map((f) => f.name).sort());
    const n = await withClient(url, (c) => c.query(`SELECT count(*)::int AS n FROM "_prisma_migrations"`));
    expect(n.rows[0].n).toBe(files.length);
  });

  it("refuses a database that has a migration this code base does not know", async () => {
    const url = await scratchDatabase("unknown");
    await runMigrations(url);
    await withClient(url, (c) =>
      c.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at) VALUES ('x', 'y', '20991231000000_from_the_future', now())`,
      ),
    );
    await expect(runMigrations(url)).rejects.toThrow(/20991231000000_from_the_future.*missing/);
  });
});
