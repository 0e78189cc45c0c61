import { inject } from "vitest";
import { harnessClient } from "../../scripts/lib/harness-clients";

/**
 * Takes a session advisory lock on the integration database, named `what`, and returns its release.
 * Some state is one for the whole database, so the test files that drive it take turns instead of
 * meeting each other's: `prepare` runs once the turn is taken.
 */
export async function takeTurn(what: string, prepare?: (c: { query: (sql: string) => Promise<unknown> }) => Promise<void>) {
  const client = harnessClient(inject("databaseUrl"), `${what} turn`);
  await client.connect();
  await client.query("SELECT pg_advisory_lock(hashtext($1))", [`tests:${what}`]);
  await prepare?.(client);
  return async () => {
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [`tests:${what}`]).catch(() => {});
    await client.end();
  };
}

/**
 * The providers' state is one row per provider for the whole database (back-offs, the offers cache,
 * today's spend against the daily caps), so test files that drive burst take turns: one file's
 * simulated outage backing a provider off must not be what another file's launch meets, nor its
 * offers the ones another file refreshed. A turn starts with no provider backed off.
 */
export const takeProviderStateTurn = () => takeTurn("provider-state", async (c) => void (await c.query("DELETE FROM provider_backoffs")));

/**
 * The notification outbox is one queue for the whole database, and a deliverer sends whatever is due
 * with its own channels: files that deliver take turns, so none sends (or fails) another's mail.
 */
export const takeOutboxTurn = () => takeTurn("notification-outbox");

/**
 * An evaluation of every rule, and the automatic remediation's cap (quarantines in its window, all
 * nodes' together), are one for the whole database: a file that evaluates every rule or remediates
 * takes this turn, so none evaluates another's rules mid-test (quarantining its node first, resolving
 * its events) nor spends another's cap.
 */
export const takeAlertEvaluationTurn = () => takeTurn("alert-evaluation");

/** Runs `fn` within the alert-evaluation turn. */
export async function inAlertEvaluationTurn<T>(fn: () => Promise<T>): Promise<T> {
  const release = await takeAlertEvaluationTurn();
  try {
    return await fn();
  } finally {
    await release();
  }
}
