import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import pg from "pg";

// The database connections and child processes that benchmarks, the soak, the test runner and
// test helpers open. Each has an error listener from birth: without one, a connection the server
// drops while idle (the database stopping under a benchmark at its end, say) throws from an event
// handler, kills the process and hides whatever had actually gone wrong behind "Connection
// terminated unexpectedly"; a child that cannot be started does the same with its spawn error.
// With one, the failure is printed with what it was, and the caller's own promise says the rest.
// tests/unit/harness-clients.test.ts fails when a harness file opens one any other way.

/** Where a harness says what failed: standard error unless it keeps a log of its own. */
type Say = (line: string) => void;
const stderr: Say = (line) => process.stderr.write(`${line}\n`);

/** A pg.Client (not connected yet) whose errors are printed under `label`, never thrown from an event. */
export function harnessClient(config: string | pg.ClientConfig, label: string, say: Say = stderr): pg.Client {
  const client = new pg.Client(typeof config === "string" ? { connectionString: config } : config);
  client.on("error", (e) => say(`[${label}] database connection lost: ${e.message}`));
  return client;
}

/** A pg.Pool whose idle connections' errors are printed under `label`. */
export function harnessPool(config: pg.PoolConfig, label: string, say: Say = stderr): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on("error", (e) => say(`[${label}] idle database connection lost: ${e.message}`));
  return pool;
}

/** Opens a client, runs `fn`, and closes it whatever happens. */
export async function withHarnessClient<T>(config: string | pg.ClientConfig, label: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = harnessClient(config, label);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * spawn() with an error listener: a command that cannot start (ENOENT, EACCES) is printed with its
 * cause and ends as an exit with code 127 that its waiters see, instead of an uncaught 'error'.
 */
export function spawnHarness(label: string, command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  child.on("error", (e) => {
    stderr(`[${label}] could not run ${command}: ${e.message}`);
    // never started (no pid): waiters on 'exit' hear of it like a shell's "command not found"
    if (child.pid === undefined && child.exitCode === null) child.emit("exit", 127, null);
  });
  return child;
}
