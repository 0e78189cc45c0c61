import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { backgroundLockPool, db, disconnectDb, ingestPool, pool } from "@/lib/db/client";

// A database restart ends every connection, idle ones included. pg reports an idle connection's
// end as an 'error' event on its pool; unheard, that event ends the process (it took the ingest
// server down with every restart in the soak). These pools must shrug it off and reconnect.
describe("the process's connection pools", () => {
  it("outlive their idle connections being terminated, and reconnect on the next query", async () => {
    const admin = new pg.Client({ connectionString: inject("databaseUrl") });
    await admin.connect();
    try {
      // (the background driver's lock connections sit idle between runs too)
      for (const p of [pool(), ingestPool(), backgroundLockPool(1)]) {
        const { rows } = await p.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        // the connection is idle in the pool now; end it from outside, as a restart would
        await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
        // gone once the server no longer lists it; the pool hears of it a moment later
        for (let i = 0; i < 100 && (await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [rows[0]!.pid])).rowCount; i++)
          await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 50));
        const again = await p.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        expect(again.rows[0]!.pid).not.toBe(rows[0]!.pid);
      }
    } finally {
      await admin.end();
    }
  });
});

// Prisma's typed queries and the set-based SQL draw on one pool, so DATABASE_POOL_SIZE bounds what
// the process's queries hold together, and disconnectDb ends that pool once however often it runs.
describe("the shared query pool", () => {
  it("serves Prisma's queries from pool()'s connections", async () => {
    await disconnectDb();
    const [{ pid }] = await db().$queryRaw<[{ pid: number }]>`SELECT pg_backend_pid() AS pid`;
    // Prisma's connection is idle in pool() now: pool() hands the same one out next
    expect(pool().totalCount).toBe(1);
    const again = await pool().query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    expect(again.rows[0]!.pid).toBe(pid);
  });

  it("is ended once by concurrent disconnects, and opened afresh afterwards", async () => {
    const before = pool();
    await db().$queryRaw`SELECT 1`;
    await Promise.all([disconnectDb(), disconnectDb()]);
    expect(before.ended).toBe(true);
    expect(pool()).not.toBe(before);
    expect((await db().$queryRaw<[{ one: number }]>`SELECT 1 AS one`)[0].one).toBe(1);
  });
});
