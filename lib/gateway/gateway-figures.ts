import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { emptyHistogram, merge, quantile, type Histogram } from "./latency-histogram";
import { GATEWAY_MINUTES } from "./statements";

// The gateway's own per-minute figures, as the SLA, the charts and the autoscaler read them. Where
// the gateway saw a minute, its figures stand for that minute (it saw every request a client made);
// the serving side's own samples fill the minutes it did not (traffic that bypassed the gateway, or
// before it existed).

export interface GatewayMinute {
  bucket: number;
  requests: number;
  errors: number;
  hist: Histogram;
}

export async function gatewayMinutes(
  endpointIds: string[],
  from: Date,
  to: Date,
  c: SqlClient = pool(),
): Promise<Map<string, GatewayMinute[]>> {
  const rows = await run(c, GATEWAY_MINUTES, [endpointIds, from, to]);
  const out = new Map<string, GatewayMinute[]>();
  for (const r of rows) {
    const list = out.get(r.endpoint_id) ?? [];
    list.push({ bucket: r.bucket.getTime(), requests: Number(r.requests), errors: Number(r.errors), hist: r.latency_hist.map(Number) });
    out.set(r.endpoint_id, list);
  }
  return out;
}

/** Several minutes as one: requests and errors summed, percentiles from the summed histogram. */
export function combine(minutes: readonly GatewayMinute[]) {
  const hist = emptyHistogram();
  let requests = 0;
  let errors = 0;
  for (const m of minutes) {
    requests += m.requests;
    errors += m.errors;
    merge(hist, m.hist);
  }
  return { requests, errors, p50Ms: quantile(hist, 0.5), p95Ms: quantile(hist, 0.95), p99Ms: quantile(hist, 0.99) };
}
