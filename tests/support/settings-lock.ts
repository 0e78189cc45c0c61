import { inject } from "vitest";
import { harnessClient } from "../../scripts/lib/harness-clients";

/**
 * Runs `fn` while holding a session advisory lock on the integration database: the platform
 * settings are one row per key for the whole database, so the two test files that write the bank
 * details (the demo seed's and the settings test) take turns instead of reading each other's.
 */
export async function withSettingsLock<T>(fn: () => Promise<T>): Promise<T> {
  const client = harnessClient(inject("databaseUrl"), "settings lock");
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('tests:platform-settings'))");
    return await fn();
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext('tests:platform-settings'))").catch(() => {});
    await client.end();
  }
}
