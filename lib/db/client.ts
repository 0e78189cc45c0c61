import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { databaseUrlOrThrow, env } from "@/lib/env";
import { logger } from "@/lib/logger";
import { stopAllListeners } from "./listen";

// One Prisma client and one pg pool per process, created lazily so that importing a module
// never opens a connection. Prisma serves the typed queries; hot paths that need set-based SQL in
// one round trip use the pool directly. Both draw on the same DATABASE_POOL_SIZE connections, so
// the setting bounds what the process's queries hold; only telemetry (ingestPool) and the
// background driver's job locks (backgroundLockPool) have connections of their own, for the
// reasons given on each.

const globalForDb = globalThis as unknown as { prisma?: PrismaClient; pgPool?: pg.Pool; ingestPool?: pg.Pool; lockPool?: pg.Pool };

export function db(): PrismaClient {
  // the adapter borrows pool() and does not end it (disposeExternalPool is false): disconnectDb does
  globalForDb.prisma ??= new PrismaClient({ adapter: new PrismaPg(pool()) });
  return globalForDb.prisma;
}

/**
 * A pool whose idle connections may die under it (the database restarts, a proxy drops them):
 * pg reports that as an 'error' event on the pool, which with no listener ends the process (it
 * took the ingest server down with every database restart). The pool has already dropped the
 * connection; the next query opens a fresh one. Prisma's adapter adds a listener of its own.
 */
function resilientPool(name: string, config: pg.PoolConfig): pg.Pool {
  const p = new pg.Pool(config);
  p.on("error", (e) => logger.warn("an idle database connection was lost; the next query opens another", { pool: name, error: e.message }));
  return p;
}

export function pool(): pg.Pool {
  globalForDb.pgPool ??= resilientPool("sql", { connectionString: databaseUrlOrThrow(), max: env().DATABASE_POOL_SIZE });
  return globalForDb.pgPool;
}

/**
 * Connections for GPU telemetry only: their commits do not wait for the WAL to reach disk
 * (synchronous_commit=off). A database crash can lose the last fraction of a second of samples —
 * never corrupt anything, never a job report, a bill or an allocation, which all use pool(). A
 * pool of its own because the setting is per connection, and so that a burst of reports cannot
 * take every connection the console and the scheduler need.
 */
export function ingestPool(): pg.Pool {
  globalForDb.ingestPool ??= resilientPool("telemetry", {
    connectionString: databaseUrlOrThrow(),
    max: env().DATABASE_POOL_SIZE,
    options: "-c synchronous_commit=off -c plan_cache_mode=force_generic_plan",
  });
  return globalForDb.ingestPool;
}

/**
 * Connections that only hold the background driver's per-job session locks, one per job at most.
 * Never pool(): a lock held there while its job waits for pool() connections of its own (its
 * Prisma queries included) starved the pool whenever as many jobs as it has connections fired in
 * the same second (a deadlock).
 */
export function backgroundLockPool(jobs: number): pg.Pool {
  globalForDb.lockPool ??= resilientPool("background locks", { connectionString: databaseUrlOrThrow(), max: Math.max(1, jobs) });
  return globalForDb.lockPool;
}

/**
 * Ends every pool this process opened, each exactly once (Prisma's adapter leaves pool() to us),
 * and forgets them, so a later call opens fresh ones. The globals are cleared before the first
 * await: a second disconnectDb meanwhile finds nothing left to end.
 */
export async function disconnectDb(): Promise<void> {
  const { prisma, pgPool, ingestPool, lockPool } = globalForDb;
  globalForDb.prisma = undefined;
  globalForDb.pgPool = undefined;
  globalForDb.ingestPool = undefined;
  globalForDb.lockPool = undefined;
  await prisma?.$disconnect();
  await pgPool?.end();
  await lockPool?.end();
  await ingestPool?.end();
  await stopAllListeners();
}

export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

/**
 * What set-based statements need from a connection: a pg client, or a Prisma transaction through
 * txClient, so one statement helper serves both kinds of caller inside their own transaction.
 */
export interface SqlClient {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export function txClient(tx: Tx): SqlClient {
  return {
    query: async <R>(text: string, values: unknown[] = []) => ({ rows: await tx.$queryRawUnsafe<R[]>(text, ...values) }),
  } as SqlClient;
}
