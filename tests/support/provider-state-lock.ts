import { inject } from "vitest";
import { harnessClient } from "../../scripts/lib/harness-clients";

/**
 * Takes a session advisory lock on the integration database for a whole test file and returns
 * its release. The providers' state is one row per provider for the whole database (back-offs,
 * the offers cache, today's spend against the daily caps), so test files that drive burst take
 * turns: one file's simulated outage backing a provider off must not be what another file's
 * launch meets, nor its offers the ones another file refreshed.
 */
export async function takeProviderStateTurn(): Promise<() => Promise<void>> {
  const client = harnessClient(inject("databaseUrl"), "provider state lock");
  await client.connect();
  await client.query("SELECT pg_advisory_lock(hashtext('tests:provider-state'))");
  // a turn starts with no provider backed off by the turn before it
  await client.query("DELETE FROM provider_backoffs");
  return async () => {
    await client.query("SELECT pg_advisory_unlock(hashtext('tests:provider-state'))").catch(() => {});
    await client.end();
  };
}
