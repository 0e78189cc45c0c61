import { spawn } from "node:child_process";
import pg from "pg";
import { describe, expect, inject, it, vi } from "vitest";
import { ChannelListener } from "@/lib/db/listen";
import { databaseRelay } from "../support/tcp-relay";
import { until } from "../support/wait";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the child whose last step is stopping a listener; resolves with its exit code and output. */
function runChild(): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=react-server", "tests/support/listener-exit-child.ts"], {
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.on("error", (e) => (out += `spawn failed: ${e.message}`));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out })));
}

/**
 * A listener on the key cache's channel over `url`, started and live; `lost()` counts its lost
 * connections. Stopped after `fn`.
 */
async function withListener(
  url: string,
  heartbeat: { heartbeatMs: number; heartbeatTimeoutMs: number },
  fn: (listener: ChannelListener, lost: () => number) => Promise<void>,
): Promise<void> {
  let lost = 0;
  const listener = new ChannelListener(
    "api_keys_changed",
    { onNotify: () => {}, onLost: () => lost++ },
    { connectionString: url, ...heartbeat },
  );
  try {
    listener.start();
    await until(() => listener.live, 10_000);
    expect(listener.live).toBe(true);
    await fn(listener, () => lost);
  } finally {
    await listener.stop();
  }
}

describe("a notification listener", () => {
  it("stopping it as a process's last step finishes: the process runs on and exits 0, every time", async () => {
    // the listening socket is unreferenced; a stop awaited on it alone ended the process in most runs
    const runs = await Promise.all(Array.from({ length: 4 }, runChild));
    expect(runs).toEqual(Array.from({ length: 4 }, () => ({ code: 0, out: "stopped\n" })));
  });

  it("the key cache's listener stops vouching for remembered keys when its heartbeat goes unanswered", async () => {
    const relay = await databaseRelay(inject("databaseUrl"));
    try {
      // seconds for an answer: CI's 2 cores also build the app and run the benchmarks meanwhile, and
      // `live` turned false there once with a 1 s timeout before the relay went silent
      await withListener(relay.url, { heartbeatMs: 250, heartbeatTimeoutMs: 2_500 }, async (listener, lost) => {
        await wait(3_500); // longer than a heartbeat and its timeout together: only answers keep it live
        expect(listener.live).toBe(true);
        expect(lost()).toBe(0);
        relay.goSilent(); // no reset, no close, just no more bytes
        await until(() => !listener.live, 20_000);
        expect(listener.live).toBe(false);
        // `live` turns false as soon as the last answer is too old; the lost connection is declared when
        // the unanswered heartbeat's timer has fired and the socket was read once more, a moment later
        await until(() => lost() > 0, 20_000);
        expect(lost()).toBeGreaterThan(0);
      });
    } finally {
      await relay.close();
    }
  });

  it("a stalled event loop is not a lost connection: a heartbeat's answer that arrived during the stall counts", async () => {
    // The loop stalls just after a heartbeat's question has been written, for longer than the
    // timeout. The database (another process) answers meanwhile, so once the loop runs again the
    // heartbeat's timer is due and its answer is waiting in the socket, unread: the case a busy
    // machine makes. Straight to the database: an in-process relay would stall with the loop.
    const stalls = { left: 0, done: 0 };
    const ask = Reflect.get(pg.Client.prototype, "query") as (this: pg.Client, ...a: unknown[]) => unknown;
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const result = ask.apply(this, args);
      if (args[0] === "SELECT 1" && stalls.left > 0) {
        stalls.left--;
        // after this turn's read of the sockets, so the answer lands during the stall and is read
        // only after the next turn's timers (a stall inside a timer would end before this turn's read)
        setImmediate(() => {
          const end = Date.now() + 2_000;
          while (Date.now() < end);
          stalls.done++;
        });
      }
      return result;
    } as typeof pg.Client.prototype.query);
    try {
      await withListener(inject("databaseUrl"), { heartbeatMs: 100, heartbeatTimeoutMs: 1_500 }, async (listener, lost) => {
        stalls.left = 3;
        await until(() => stalls.done === 3, 30_000);
        await wait(300); // past the last stall's timer and its verdict
        expect(lost()).toBe(0);
        expect(listener.live).toBe(true);
      });
    } finally {
      spy.mockRestore();
    }
  });
});
