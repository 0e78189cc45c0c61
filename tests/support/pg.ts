import pg from "pg";
import { inject } from "vitest";
import { ensureDatabase } from "../../scripts/lib/embedded-db";

export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A brand-new empty database on the test server, for tests that need to migrate from scratch. */
export async function scratchDatabase(tag: string): Promise<string> {
  const name = `scratch_${tag}_${Math.random().toString(36).slice(2, 10)}`;
  return ensureDatabase(inject("serverUrl"), name);
}
