// Every PostgreSQL advisory lock GPUForge takes, under one scheme: a name from this list, whose
// 64-bit key PostgreSQL derives in the statement itself, hashtextextended('gpuforge:<name>', 0),
// so every process computes the same key and no two locks can share one by accident.
//
//   scheduler     one placement decision at a time: a scheduling cycle, and every change that
//                 frees or claims GPUs or quota outside it (requeues, suspensions, pod moves)
//   invoices      one invoice run at a time (periods are closed once)
//   remediation   the blast-radius cap is counted and used by one quarantine decision at a time
//   migrations    one process migrates; the others wait and find the work done
//   tool-calls    one claim of pipelines' tool calls at a time: each tenant's calls in flight are
//                 counted and filled up to its cap by one worker at a time
//   background:*  one run of a background job at a time across app processes (session lock)
//   burst:tenant:<id>, burst:provider:<name>
//                 one launch decision at a time per tenant and per provider: the spend caps, the
//                 quota headroom and the prepaid balance are counted and the launching row written
//                 under them (always the tenant's first, then the provider's)

import type pg from "pg";

export type LockName =
  "scheduler" | "scheduler:waiting" | "invoices" | "remediation" | "migrations" | "tool-calls" | `background:${string}` | `burst:${string}`;

/** Anything that runs a parameterized statement: a pg client or pool, a transaction's client. */
export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

const KEY = "hashtextextended($1, 0)";
const param = (name: LockName) => [`gpuforge:${name}`];

/**
 * Opens a transaction and waits for the lock in it, in one message to the server: a round trip
 * fewer for every locked transaction (on two cores each one wakes a backend; the scheduler's cycles
 * run back to back). The name is sent as a quoted literal, since a simple query carries no parameters.
 */
export async function beginLocked(c: Pick<pg.ClientBase, "query" | "escapeLiteral">, name: LockName): Promise<void> {
  await c.query(`BEGIN; SELECT pg_advisory_xact_lock(${KEY.replace("$1", c.escapeLiteral(param(name)[0]!))})::text`);
}

/** Waits for the lock; it is released when the transaction ends. */
export async function lockForTransaction(c: Queryable, name: LockName): Promise<void> {
  await c.query(`SELECT pg_advisory_xact_lock(${KEY})::text`, param(name));
}

/** The lock for a Prisma interactive transaction (tagged-template queries only). */
export async function lockPrismaTransaction(
  tx: { $queryRawUnsafe(sql: string, ...values: unknown[]): Promise<unknown> },
  name: LockName,
): Promise<void> {
  await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${KEY})::text`, ...param(name));
}

/** Takes the lock for this session if nobody holds it; false when somebody does. */
export async function tryLockSession(c: Queryable, name: LockName): Promise<boolean> {
  const { rows } = await c.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${KEY}) AS locked`, param(name));
  return rows[0]?.locked === true;
}

/** Waits for the lock for this session; release it with unlockSession. */
export async function lockSession(c: Queryable, name: LockName): Promise<void> {
  await c.query(`SELECT pg_advisory_lock(${KEY})::text`, param(name));
}

export async function unlockSession(c: Queryable, name: LockName): Promise<void> {
  await c.query(`SELECT pg_advisory_unlock(${KEY})`, param(name));
}
