import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { dropDatabase, ensureDatabase, freePort, startEmbeddedDatabase, withDatabase } from "../../scripts/lib/embedded-db";
import { withHarnessClient } from "../../scripts/lib/harness-clients";
import { runMigrations } from "../../scripts/lib/run-migrations";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    serverUrl: string;
  }
}

/**
 * Gives each test project a fresh, migrated database. The server is, in order of preference:
 * the one scripts/test.ts started (TEST_DATABASE_SERVER_URL), the server of DATABASE_URL, or
 * an embedded PostgreSQL started here in a child process and stopped afterwards.
 */
export default async function setup(project: TestProject) {
  let serverUrl =
    process.env.TEST_DATABASE_SERVER_URL ?? (process.env.DATABASE_URL ? withDatabase(process.env.DATABASE_URL, "postgres") : undefined);
  let stopServer: (() => Promise<void>) | undefined;
  let tempDir: string | undefined;
  if (!serverUrl) {
    tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-test-"));
    const server = await startEmbeddedDatabase({
      dataDir: path.join(tempDir, "pg"),
      port: await freePort(),
      fast: true,
      ephemeral: true,
      log: () => {},
    });
    serverUrl = server.serverUrl;
    stopServer = () => server.discard();
  }
  const name = `gpuforge_${project.name}_${process.pid}_${Date.now().toString(36)}`.replace(/[^a-z0-9_]/g, "_");
  const databaseUrl = await ensureDatabase(serverUrl, name);
  await runMigrations(databaseUrl);
  if (project.name === "integration") await disableFleetWideRules(databaseUrl);
  project.provide("databaseUrl", databaseUrl);
  project.provide("serverUrl", serverUrl);
  process.env.DATABASE_URL = databaseUrl;

  return async () => {
    await dropDatabase(serverUrl!, name).catch(() => {});
    await stopServer?.();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };
}

/**
 * The integration files share one database and evaluate every rule: the migration's fleet-wide
 * rules (one auto-remediating a fatal XID) would act on every file's nodes, quarantining a node
 * another file reported a fault on. Their tests make rules of their own, per cluster.
 */
const disableFleetWideRules = (databaseUrl: string) =>
  withHarnessClient(databaseUrl, "global setup", (c) => c.query(`UPDATE alert_rules SET enabled = false WHERE cluster_id IS NULL`));
