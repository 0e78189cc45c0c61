import type pg from "pg";
import { inject } from "vitest";
import { ensureDatabase } from "../../scripts/lib/embedded-db";
import { withHarnessClient } from "../../scripts/lib/harness-clients";

export function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  return withHarnessClient(url, "test database", fn);
}

/** A brand-new empty database on the test server, for tests that need to migrate from scratch. */
export async function scratchDatabase(tag: string): Promise<string> {
  const name = `scratch_${tag}_${Math.random().toString(36).slice(2, 10)}`;
  return ensureDatabase(inject("serverUrl"), name);
}
