import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { lockForTransaction } from "@/lib/db/locks";
import { inTransaction } from "@/lib/db/transaction";

// The one transaction helper (lib/db/transaction.ts) and the one lock scheme (lib/db/locks.ts).
// A pool of one connection, so each call sees what the previous one left on it.

let single: pg.Pool;
let other: pg.Pool;

beforeAll(() => {
  single = new pg.Pool({ connectionString: inject("databaseUrl"), max: 1 });
  other = new pg.Pool({ connectionString: inject("databaseUrl"), max: 1 });
});

afterAll(async () => {
  await single.end();
  await other.end();
});

const setting = async () => (await single.query<{ v: string }>("SELECT current_setting('gpuforge.test', true) AS v")).rows[0]!.v;
const lockFree = async () => {
  const c = await other.connect();
  try {
    await c.query("BEGIN");
    const { rows } = await c.query<{ free: boolean }>("SELECT pg_try_advisory_xact_lock(hashtextextended('gpuforge:invoices', 0)) AS free");
    await c.query("ROLLBACK");
    return rows[0]!.free;
  } finally {
    c.release();
  }
};

describe("inTransaction", () => {
  it("commits what the work did when it returns, and hands back its result", async () => {
    expect(
      await inTransaction(async (c) => (await c.query("SELECT set_config('gpuforge.test', 'committed', false)"), 42), { pool: single }),
    ).toBe(42);
    expect(await setting()).toBe("committed");
  });

  it("rolls back when the work throws, and rethrows its error", async () => {
    await inTransaction((c) => c.query("SELECT set_config('gpuforge.test', 'before', false)"), { pool: single });
    const error = await inTransaction(
      async (c) => {
        await c.query("SELECT set_config('gpuforge.test', 'rolled back', false)");
        throw new Error("the work failed");
      },
      { pool: single },
    ).catch((e: Error) => e);
    expect(error).toMatchObject({ message: "the work failed" });
    expect(await setting()).toBe("before");
  });

  it("holds the named lock from the start to the end of the transaction, as the same key everywhere", async () => {
    expect(await lockFree()).toBe(true);
    await inTransaction(
      async () => {
        expect(await lockFree()).toBe(false);
      },
      { pool: single, lock: "invoices" },
    );
    expect(await lockFree()).toBe(true);
    // taken by hand inside another transaction, it is the same lock
    await inTransaction(
      async (c) => {
        await lockForTransaction(c, "invoices");
        expect(await lockFree()).toBe(false);
      },
      { pool: single },
    );
  });

  it("takes a lock whose name carries a quote as that very name (it is sent as a literal beside BEGIN)", async () => {
    const name = "burst:tenant:o'brien\\'; SELECT 1; --" as const;
    await inTransaction(
      async () => {
        const c = await other.connect();
        try {
          await c.query("BEGIN");
          const { rows } = await c.query<{ free: boolean }>("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS free", [
            `gpuforge:${name}`,
          ]);
          await c.query("ROLLBACK");
          expect(rows[0]!.free).toBe(false);
        } finally {
          c.release();
        }
      },
      { pool: single, lock: name },
    );
  });

  it("destroys a connection that broke under the work instead of handing it back to the pool", async () => {
    const pid = (await single.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const error = await inTransaction(
      async (c) => {
        await other.query("SELECT pg_terminate_backend($1)", [pid]);
        await c.query("SELECT 1");
      },
      { pool: single },
    ).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    // the next caller gets a fresh, working connection
    const next = (await single.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    expect(next).not.toBe(pid);
  });
});
