import { spawn } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { ChannelListener } from "@/lib/db/listen";
import { databaseRelay } from "../support/tcp-relay";

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

/** Waits (up to 10 s) for a started listener to be listening. */
async function untilLive(listener: ChannelListener): Promise<void> {
  for (let i = 0; i < 200 && !listener.live; i++) await wait(50);
  expect(listener.live).toBe(true);
}

describe("a notification listener", () => {
  it("stopping it as a process's last step finishes: the process runs on and exits 0, every time", async () => {
    // the listening socket is unreferenced; a stop awaited on it alone ended the process in most runs
    const runs = await Promise.all(Array.from({ length: 4 }, runChild));
    expect(runs).toEqual(Array.from({ length: 4 }, () => ({ code: 0, out: "stopped\n" })));
  });

  it("the key cache's listener stops vouching for remembered keys when its heartbeat goes unanswered", async () => {
    const relay = await databaseRelay(inject("databaseUrl"));
    let lost = 0;
    const listener = new ChannelListener(
      "api_keys_changed",
      { onNotify: () => {}, onLost: () => lost++ },
      // seconds for an answer: CI's 2 cores also build the app and run the benchmarks meanwhile, and
      // `live` turned false there once with a 1 s timeout before the relay went silent
      { connectionString: relay.url, heartbeatMs: 250, heartbeatTimeoutMs: 2_500 },
    );
    try {
      listener.start();
      await untilLive(listener);
      await wait(3_500); // longer than a heartbeat and its timeout together: only answers keep it live
      expect(listener.live).toBe(true);
      expect(lost).toBe(0);
      relay.goSilent(); // no reset, no close, just no more bytes
      const silentAt = Date.now();
      while (listener.live && Date.now() - silentAt < 20_000) await wait(50);
      expect(listener.live).toBe(false);
      // `live` turns false as soon as the last answer is too old; the lost connection is declared when
      // the unanswered heartbeat's timer has fired and the socket was read once more, a moment later
      while (lost === 0 && Date.now() - silentAt < 20_000) await wait(50);
      expect(lost).toBeGreaterThan(0);
    } finally {
      await listener.stop();
      await relay.close();
    }
  });

  it("a stalled event loop is not a lost connection: a heartbeat's answer that arrived during the stall counts", async () => {
    // the server's answers are held back 80 ms, so a stall that begins after a question (asked
    // every 100 ms) most often begins with its answer on the way, and it lands while the loop is stuck
    const relay = await databaseRelay(inject("databaseUrl"), { answerDelayMs: 80 });
    let lost = 0;
    const listener = new ChannelListener(
      "api_keys_changed",
      { onNotify: () => {}, onLost: () => lost++ },
      // a timeout loose enough for a loaded machine's answers, and stalls longer than it
      { connectionString: relay.url, heartbeatMs: 100, heartbeatTimeoutMs: 1_500 },
    );
    try {
      listener.start();
      await untilLive(listener);
      for (let stall = 0; stall < 4; stall++) {
        await wait(130 + stall * 17);
        const until = Date.now() + 2_000; // longer than the timeout: its timer is due once the loop runs again
        while (Date.now() < until);
        await wait(50);
      }
      expect(lost).toBe(0);
      expect(listener.live).toBe(true);
    } finally {
      await listener.stop();
      await relay.close();
    }
  });
});
