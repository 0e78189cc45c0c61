import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
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
 * A listener on the key cache's channel through a relay to the test database, started and live;
 * `lost()` counts its lost connections. Stopped, with its relay, after `fn`.
 */
async function withRelayedListener(
  relayOpts: { answerDelayMs?: number },
  heartbeat: { heartbeatMs: number; heartbeatTimeoutMs: number },
  fn: (listener: ChannelListener, relay: Awaited<ReturnType<typeof databaseRelay>>, lost: () => number) => Promise<void>,
): Promise<void> {
  const relay = await databaseRelay(inject("databaseUrl"), relayOpts);
  let lost = 0;
  const listener = new ChannelListener(
    "api_keys_changed",
    { onNotify: () => {}, onLost: () => lost++ },
    { connectionString: relay.url, ...heartbeat },
  );
  try {
    listener.start();
    await until(() => listener.live, 10_000);
    expect(listener.live).toBe(true);
    await fn(listener, relay, () => lost);
  } finally {
    await listener.stop();
    await relay.close();
  }
}

describe("a notification listener", () => {
  it("stopping it as a process's last step finishes: the process runs on and exits 0, every time", async () => {
    // the listening socket is unreferenced; a stop awaited on it alone ended the process in most runs
    const runs = await Promise.all(Array.from({ length: 4 }, runChild));
    expect(runs).toEqual(Array.from({ length: 4 }, () => ({ code: 0, out: "stopped\n" })));
  });

  it("the key cache's listener stops vouching for remembered keys when its heartbeat goes unanswered", async () => {
    // seconds for an answer: CI's 2 cores also build the app and run the benchmarks meanwhile, and
    // `live` turned false there once with a 1 s timeout before the relay went silent
    await withRelayedListener({}, { heartbeatMs: 250, heartbeatTimeoutMs: 2_500 }, async (listener, relay, lost) => {
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
  });

  it("a stalled event loop is not a lost connection: a heartbeat's answer that arrived during the stall counts", async () => {
    // the server's answers are held back 80 ms, so a stall that begins after a question (asked
    // every 100 ms) most often begins with its answer on the way, and it lands while the loop is stuck;
    // a timeout loose enough for a loaded machine's answers, and stalls longer than it
    await withRelayedListener({ answerDelayMs: 80 }, { heartbeatMs: 100, heartbeatTimeoutMs: 1_500 }, async (listener, _relay, lost) => {
      for (let stall = 0; stall < 4; stall++) {
        await wait(130 + stall * 17);
        const end = Date.now() + 2_000; // longer than the timeout: its timer is due once the loop runs again
        while (Date.now() < end);
        await wait(50);
      }
      expect(lost()).toBe(0);
      expect(listener.live).toBe(true);
    });
  });
});
