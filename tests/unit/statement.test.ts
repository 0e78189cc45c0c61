import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { registeredStatements, run, runCount, runOne, statement } from "@/lib/db/statement";

// The statement runner: how a declared statement reaches each kind of client, and that the rows
// keep their declared shape whichever answers (the shapes themselves are checked against the
// database by tests/integration/sql-statements.test.ts).

const TOTALS = statement("test.totals", { params: ["uuid?"], columns: { n: "int4", sum: "int8", avg: "numeric?" }, text: "SELECT 1" });
const HOT = statement("test.hot", { params: ["text"], columns: { id: "uuid" }, prepare: true, text: "SELECT 2" });
const WRITE = statement("test.write", { params: ["uuid[]"], columns: {}, text: "UPDATE x" });

describe("statements", () => {
  it("register themselves when defined", () => {
    expect(registeredStatements()).toEqual(expect.arrayContaining([TOTALS, HOT, WRITE]));
  });

  it("run on a Prisma client or transaction with their values spread, int8 and numeric answered as strings as pg answers them", async () => {
    const $queryRawUnsafe = vi.fn(async () => [
      { n: 2, sum: 12n, avg: { toString: () => "1.50" } },
      { n: 0, sum: 0n, avg: null },
    ]);
    const rows = await run({ $queryRawUnsafe, $executeRawUnsafe: vi.fn() } as never, TOTALS, ["7a9c2a39-0d5a-4a53-9a63-7e5f3bb1b6a1"]);
    expect($queryRawUnsafe).toHaveBeenCalledWith("SELECT 1", "7a9c2a39-0d5a-4a53-9a63-7e5f3bb1b6a1");
    expect(rows).toEqual([
      { n: 2, sum: "12", avg: "1.50" },
      { n: 0, sum: "0", avg: null },
    ]);
  });

  it("run on a txClient-style client with the values as one array", async () => {
    const query = vi.fn(async () => ({ rows: [{ n: 1, sum: 5n, avg: null }] }));
    expect(await runOne({ query } as never, TOTALS, [null])).toEqual({ n: 1, sum: "5", avg: null });
    expect(query).toHaveBeenCalledWith("SELECT 1", [null]);
  });

  it("prepare by name on a pg pool when declared so, and not otherwise", async () => {
    const pool = new pg.Pool();
    const query = vi.spyOn(pool, "query").mockImplementation((async () => ({ rows: [], rowCount: 3 })) as never);
    await run(pool, HOT, ["k"]);
    expect(query).toHaveBeenLastCalledWith({ name: "test.hot", text: "SELECT 2", values: ["k"] });
    expect(await runCount(pool, WRITE, [["a"]])).toBe(3);
    expect(query).toHaveBeenLastCalledWith("UPDATE x", [["a"]]);
    await pool.end();
  });

  it("count a Prisma client's changed rows through $executeRawUnsafe", async () => {
    const $executeRawUnsafe = vi.fn(async () => 4);
    expect(await runCount({ $queryRawUnsafe: vi.fn(), $executeRawUnsafe } as never, WRITE, [["a", "b"]])).toBe(4);
    expect($executeRawUnsafe).toHaveBeenCalledWith("UPDATE x", ["a", "b"]);
  });
});
