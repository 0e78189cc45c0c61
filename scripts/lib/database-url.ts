import path from "node:path";
import { ensureDatabase, startEmbeddedDatabase } from "./embedded-db";
import { harnessClient } from "./harness-clients";

export const repoRoot = path.resolve(import.meta.dirname, "..", "..");
export const EMBEDDED_PORT = Number(process.env.EMBEDDED_PG_PORT ?? 54329);
export const EMBEDDED_DB_NAME = "gpuforge";

/**
 * Runs `fn` with a database URL: DATABASE_URL when set, otherwise the embedded server under
 * .data/ (started for the duration of `fn` and stopped cleanly afterwards).
 */
export async function withDatabaseUrl<T>(fn: (url: string, embedded: boolean) => Promise<T>): Promise<T> {
  if (process.env.DATABASE_URL) return fn(process.env.DATABASE_URL, false);
  // `npm start` may already be running the embedded server: share it rather than start a second.
  const running = await runningEmbeddedServer();
  if (running) return fn(await ensureDatabase(running, EMBEDDED_DB_NAME), true);
  const server = await startEmbeddedDatabase({ dataDir: path.join(repoRoot, ".data", "postgres"), port: EMBEDDED_PORT });
  try {
    const url = await ensureDatabase(server.serverUrl, EMBEDDED_DB_NAME);
    return await fn(url, true);
  } finally {
    await server.stop();
  }
}

async function runningEmbeddedServer(): Promise<string | undefined> {
  const url = `postgresql://postgres:postgres@127.0.0.1:${EMBEDDED_PORT}/postgres`;
  const client = harnessClient({ connectionString: url, connectionTimeoutMillis: 1_000 }, "embedded database probe");
  try {
    await client.connect();
    return url;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}
