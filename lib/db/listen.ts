import "server-only";
import pg from "pg";
import { databaseUrlOrThrow } from "@/lib/env";
import { logger } from "@/lib/logger";

const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** How often the listening connection proves it is alive, and how long an answer may take. */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_TIMEOUT_MS = 5_000;
const listeners = new Set<ChannelListener>();

/** The client's socket (pg does not expose it in its types): held, let go or dropped by the listener. */
const socketOf = (client: pg.Client) =>
  (client as unknown as { connection?: { stream?: { ref?: () => void; unref?: () => void; destroy?: () => void } } }).connection?.stream;

/** Stops every listener of this process (disconnectDb); each starts again when next used. */
export async function stopAllListeners(): Promise<void> {
  await Promise.all([...listeners].map((l) => l.stop()));
}

/**
 * One dedicated connection that LISTENs on a channel and keeps listening: it reconnects with
 * backoff when the connection drops. `live` is true only while notifications are certain to
 * arrive; a caller that relies on them (a cache that must forget) treats `onLost` as "you may
 * have missed some" and `live === false` as "rely on nothing".
 *
 * A connection can also die silently (a firewall drops its state, a peer vanishes without a
 * reset): no error, no end, just no more notifications. So the listener asks the server a
 * question every `heartbeatMs`; an answer not back within `heartbeatTimeoutMs` counts as a lost
 * connection, and `live` turns false as soon as the last answer is older than the two together,
 * even before the timer fires.
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private retryMs = RETRY_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private stopped = false;
  private connected = false;
  private lastHeardAt = 0;
  private readonly heartbeatMs: number;
  private readonly heartbeatTimeoutMs: number;

  constructor(
    private readonly channel: string,
    private readonly handlers: { onNotify: (payload: string) => void; onLost: () => void },
    private readonly opts: { connectionString?: string; heartbeatMs?: number; heartbeatTimeoutMs?: number } = {},
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`unsafe channel name: ${channel}`);
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.heartbeatTimeoutMs = opts.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS;
  }

  get live(): boolean {
    return this.connected && Date.now() - this.lastHeardAt <= this.heartbeatMs + this.heartbeatTimeoutMs;
  }

  start(): void {
    if (this.client || this.retryTimer) return;
    this.stopped = false;
    listeners.add(this);
    const client = new pg.Client({
      connectionString: this.opts.connectionString ?? databaseUrlOrThrow(),
      application_name: `listen:${this.channel}`,
      keepAlive: true,
    });
    this.client = client;
    client.on("notification", (n) => {
      this.lastHeardAt = Date.now();
      if (n.channel === this.channel) this.handlers.onNotify(n.payload ?? "");
    });
    const lost = (why: string) => {
      if (this.client !== client) return;
      this.client = null;
      const wasLive = this.connected;
      this.connected = false;
      this.stopHeartbeat();
      this.handlers.onLost();
      // a silent connection may never finish a polite goodbye: drop the socket too
      client.end().catch(() => {});
      socketOf(client)?.destroy?.();
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
        socketOf(client)?.unref?.();
        return client.query(`LISTEN ${this.channel}`);
      })
      .then(() => {
        if (this.client !== client) return;
        this.connected = true;
        this.lastHeardAt = Date.now();
        this.retryMs = RETRY_MIN_MS;
        this.startHeartbeat(client, lost);
      })
      .catch((e) => lost(String(e)));
  }

  private startHeartbeat(client: pg.Client, lost: (why: string) => void): void {
    this.stopHeartbeat();
    let asking = false;
    this.heartbeat = setInterval(() => {
      // one question at a time: an unanswered one has its own timer, and pg queues a second behind it
      if (asking) return;
      asking = true;
      // Timers run before the event loop reads its sockets: after a stall (a long GC, a busy
      // machine) this timer can fire with the answer already waiting to be read. The verdict is
      // given after one more turn of reading, so only an answer that truly is not there counts.
      const timer = setTimeout(
        () => setImmediate(() => asking && lost(`no answer to a heartbeat within ${this.heartbeatTimeoutMs} ms`)),
        this.heartbeatTimeoutMs,
      );
      timer.unref();
      client.query("SELECT 1").then(
        () => {
          asking = false;
          clearTimeout(timer);
          if (this.client === client) this.lastHeardAt = Date.now();
        },
        (e: unknown) => {
          asking = false;
          clearTimeout(timer);
          lost(String(e));
        },
      );
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    listeners.delete(this);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.client;
    this.client = null;
    this.connected = false;
    this.stopHeartbeat();
    if (!client) return;
    // the listening socket does not keep the process alive (above), so a goodbye awaited on it alone
    // let the process exit mid-await (code 13, the caller's next line never ran): held while it ends,
    // and dropped if the server does not answer within a second
    const stream = socketOf(client);
    stream?.ref?.();
    const giveUp = setTimeout(() => stream?.destroy?.(), 1_000);
    await client.end().catch(() => {});
    clearTimeout(giveUp);
  }
}
