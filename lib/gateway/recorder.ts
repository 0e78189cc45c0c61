import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { logger } from "@/lib/logger";
import { emptyHistogram, merge, record, type Histogram } from "./latency-histogram";
import { ADD_GATEWAY_MINUTES } from "./statements";

// What this gateway process saw, per endpoint and minute: requests, errors (5xx, and requests it
// could not serve) and a latency histogram, written every GATEWAY_FLUSH_MS by adding to the
// minute's row, so any number of gateway processes sum up exactly. The SLA and the autoscaler read
// these figures first (lib/endpoints/endpoint-sla.ts, reconcile-endpoints.ts).

interface Minute {
  endpointId: string;
  bucket: number;
  requests: number;
  errors: number;
  hist: Histogram;
}

/** Minutes a process keeps while the database is away, before it drops the oldest. */
const MAX_PENDING = 50_000;

export class Recorder {
  private minutes = new Map<string, Minute>();

  record(endpointId: string, at: number, ms: number, error: boolean): void {
    const bucket = Math.floor(at / 60_000) * 60_000;
    const key = `${endpointId}|${bucket}`;
    let m = this.minutes.get(key);
    if (!m) {
      if (this.minutes.size >= MAX_PENDING) this.minutes.delete(this.minutes.keys().next().value!);
      m = { endpointId, bucket, requests: 0, errors: 0, hist: emptyHistogram() };
      this.minutes.set(key, m);
    }
    m.requests++;
    if (error) m.errors++;
    record(m.hist, ms);
  }

  /** Adds what was seen since the last flush to the database; kept for the next try if that fails. */
  async flush(): Promise<number> {
    if (this.minutes.size === 0) return 0;
    const batch = [...this.minutes.values()];
    this.minutes = new Map();
    try {
      await run(pool(), ADD_GATEWAY_MINUTES, [
        JSON.stringify(
          batch.map((m) => ({ endpoint_id: m.endpointId, bucket: m.bucket, requests: m.requests, errors: m.errors, hist: m.hist })),
        ),
      ]);
      return batch.length;
    } catch (e) {
      logger.warn("gateway: could not write its per-minute figures; keeping them for the next flush", { error: String(e) });
      for (const m of batch) {
        const key = `${m.endpointId}|${m.bucket}`;
        const cur = this.minutes.get(key);
        if (cur) {
          cur.requests += m.requests;
          cur.errors += m.errors;
          merge(cur.hist, m.hist);
        } else this.minutes.set(key, m);
      }
      return 0;
    }
  }
}
