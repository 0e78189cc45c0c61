import path from "node:path";
import { ensureDatabase, startEmbeddedDatabase } from "./embedded-db";

export const repoRoot = path.resolve(import.meta.dirname, "..", "..");
export const EMBEDDED_PORT = Number(process.env.EMBEDDED_PG_PORT ?? 54329);
export const EMBEDDED_DB_NAME = "gpuforge";

/**
 * Runs `fn` with a database URL: DATABASE_URL when set, otherwise the embedded server under
 * .data/ (started for the duration of `fn` and stopped cleanly afterwards).
 */
export async function withDatabaseUrl<T>(fn: (url: string, embedded: boolean) => Promise<T>): Promise<T> {
  if (process.env.DATABASE_URL) return fn(process.env.DATABASE_URL, false);
  const server = await startEmbeddedDatabase({ dataDir: path.join(repoRoot, ".data", "postgres"), port: EMBEDDED_PORT });
  try {
    const url = await ensureDatabase(server.serverUrl, EMBEDDED_DB_NAME);
    return await fn(url, true);
  } finally {
    await server.stop();
  }
}
