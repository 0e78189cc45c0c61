import "server-only";
import pg from "pg";
import { databaseUrlOrThrow } from "@/lib/env";
import { logger } from "@/lib/logger";

const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
const listeners = new Set<ChannelListener>();

/** Stops every listener of this process (disconnectDb); each starts again when next used. */
export async function stopAllListeners(): Promise<void> {
  await Promise.all([...listeners].map((l) => l.stop()));
}

/**
 * One dedicated connection that LISTENs on a channel and keeps listening: it reconnects with
 * backoff when the connection drops. `live` is true only while notifications are certain to
 * arrive; a caller that relies on them (a cache that must forget) treats `onLost` as "you may
 * have missed some" and `live === false` as "rely on nothing".
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  live = false;

  constructor(
    private readonly channel: string,
    private readonly handlers: { onNotify: (payload: string) => void; onLost: () => void },
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`unsafe channel name: ${channel}`);
  }

  start(): void {
    if (this.client || this.retryTimer) return;
    this.stopped = false;
    listeners.add(this);
    const client = new pg.Client({ connectionString: databaseUrlOrThrow(), application_name: `listen:${this.channel}`, keepAlive: true });
    this.client = client;
    client.on("notification", (n) => {
      if (n.channel === this.channel) this.handlers.onNotify(n.payload ?? "");
    });
    const lost = (why: string) => {
      if (this.client !== client) return;
      this.client = null;
      const wasLive = this.live;
      this.live = false;
      this.handlers.onLost();
      client.end().catch(() => {});
      if (this.stopped) return;
      if (wasLive) logger.warn("notification listener lost its connection; retrying", { channel: this.channel, why });
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.start();
      }, this.retryMs);
      this.retryTimer.unref();
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    };
    client.on("error", (e) => lost(String(e)));
    client.on("end", () => lost("connection ended"));
    client
      .connect()
      .then(() => {
        // the listening connection must never keep a process alive on its own
        (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
        return client.query(`LISTEN ${this.channel}`);
      })
      .then(() => {
        if (this.client !== client) return;
        this.live = true;
        this.retryMs = RETRY_MIN_MS;
      })
      .catch((e) => lost(String(e)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    listeners.delete(this);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    this.live = false;
    await client?.end().catch(() => {});
  }
}
