import "server-only";
import type pg from "pg";
import { pool } from "./client";
import { beginLocked, type LockName } from "./locks";

/**
 * Runs `work` in one transaction on a connection of its own (by default from pool()), holding the
 * named advisory lock from the start when given: committed when it returns, rolled back when it
 * throws (the error is the caller's). A connection that dies while held (the database restarted,
 * say) fails the work's next statement rather than the process, and a connection whose ROLLBACK
 * fails is destroyed rather than handed back to the pool.
 */
export async function inTransaction<T>(work: (c: pg.PoolClient) => Promise<T>, opts: { lock?: LockName; pool?: pg.Pool } = {}): Promise<T> {
  const c = await (opts.pool ?? pool()).connect();
  let broken: Error | undefined;
  const died = (e: Error) => {
    broken ??= e;
  };
  c.on("error", died);
  try {
    if (opts.lock) await beginLocked(c, opts.lock);
    else await c.query("BEGIN");
    const result = await work(c);
    await c.query("COMMIT");
    return result;
  } catch (e) {
    await c.query("ROLLBACK").catch((rollback: unknown) => {
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw e;
  } finally {
    c.off("error", died);
    c.release(broken);
  }
}
