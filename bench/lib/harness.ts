import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dropDatabase, ensureDatabase, freePort, startEmbeddedDatabase } from "../../scripts/lib/embedded-db";
import { buildIsFresh, nextBuild, startNext, waitForHealthy } from "../../scripts/lib/next-server";
import { runMigrations } from "../../scripts/lib/run-migrations";

export { median, percentile, round } from "../../scripts/lib/stats";

/**
 * A benchmark's world: a fresh migrated database (embedded, or a new database on the server of
 * DATABASE_URL, dropped afterwards) and the production build serving it on a free port. Everything stops afterwards.
 * `env` is configuration the benchmark's deployment needs (the networks its simulated nodes'
 * addresses are in, say): the app gets it, and so does this process, whose library calls read the
 * same configuration.
 */
export async function withBenchStack<T>(
  fn: (ctx: { baseUrl: string; databaseUrl: string }) => Promise<T>,
  opts: { env?: Record<string, string> } = {},
): Promise<T> {
  const tempDir = mkdtempSync(path.join(os.tmpdir(), "gpuforge-bench-"));
  const name = `gpuforge_bench_${Date.now().toString(36)}`;
  const external = process.env.DATABASE_URL;
  // on someone else's server, the benchmark's database goes when it ends (a full run leaves gigabytes)
  const server = external
    ? { serverUrl: external, discard: () => dropDatabase(external, name) }
    : await startEmbeddedDatabase({ dataDir: path.join(tempDir, "pg"), port: await freePort(), ephemeral: true, log: () => {} });
  const databaseUrl = await ensureDatabase(server.serverUrl, name);
  await runMigrations(databaseUrl);
  Object.assign(process.env, opts.env, { DATABASE_URL: databaseUrl });
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NEXTAUTH_SECRET: "bench-secret-0123456789abcdef0123456789",
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    DATABASE_POOL_SIZE: "20",
    // production servers name the nodes' networks and their public address (lib/env.ts)
    NODE_ADDRESS_NETWORKS: "127.0.0.0/8",
    AGENT_PUBLISHED_PORTS: "1024-65535",
    ...opts.env,
  } as NodeJS.ProcessEnv;
  if (!buildIsFresh()) nextBuild(env);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = startNext({ port, env: { ...env, NEXTAUTH_URL: baseUrl }, quiet: true });
  try {
    await waitForHealthy(baseUrl);
    return await fn({ baseUrl, databaseUrl });
  } finally {
    await app.stop();
    await server.discard();
    rmSync(tempDir, { recursive: true, force: true });
  }
}
