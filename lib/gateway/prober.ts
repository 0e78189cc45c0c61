import "server-only";
import http from "node:http";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { WORKLOAD_ACCESS_HEADER } from "@/lib/fleet/workload-access";
import { logger } from "@/lib/logger";
import type { ReplicaTarget } from "./routing-table";
import { RECORD_PROBES_FAILING, RECORD_PROBES_PASSED } from "./statements";

// Active health checks: every GATEWAY_PROBE_INTERVAL_MS this process asks each replica for its
// endpoint's health path (`GET /health` unless configured). A replica is in rotation only after a
// probe passed, and leaves it at the first probe that fails (or at once when a request cannot
// reach it), so a failing replica stops taking traffic within one probe interval — long before
// the reconciler replaces it. What the probes find also goes to the database: a passing probe
// makes a starting replica ready (serving sides that post no samples, such as a plain vLLM, need
// nothing more) and keeps it from being counted silent; failing probes make a ready replica
// unhealthy, which the reconciler replaces if it stays so.

const FAILURES_BEFORE_UNHEALTHY = 3;
const PROBE_CONCURRENCY = 64;
/** A passing replica's last_probe_ok_at is rewritten at most this often. */
const OK_WRITE_EVERY_MS = 10_000;

interface State {
  ok: boolean;
  failures: number;
  checkedAt: number;
  error?: string;
  okWrittenAt?: number;
}

export class Prober {
  private state = new Map<string, State>();

  constructor(private readonly opts: { agent: http.Agent; timeoutMs: number }) {}

  inRotation(replicaId: string): boolean {
    return this.state.get(replicaId)?.ok === true;
  }

  known(replicaId: string): boolean {
    return this.state.has(replicaId);
  }

  /** A request could not reach the replica: out of rotation until a probe passes again. */
  markFailed(replicaId: string, error: string): void {
    const s = this.state.get(replicaId);
    if (s) Object.assign(s, { ok: false, failures: s.failures + 1, error });
  }

  /** Probes the given replicas (all of them each interval; new ones at once) and records what changed. */
  async probe(targets: Array<ReplicaTarget & { healthPath: string }>): Promise<void> {
    const alive = new Set(targets.map((t) => t.id));
    for (const id of this.state.keys()) if (!alive.has(id)) this.state.delete(id);
    const results: Array<{ id: string; ok: boolean; error?: string }> = [];
    for (let i = 0; i < targets.length; i += PROBE_CONCURRENCY) {
      results.push(
        ...(await Promise.all(targets.slice(i, i + PROBE_CONCURRENCY).map(async (t) => ({ id: t.id, ...(await this.check(t)) })))),
      );
    }
    const now = Date.now();
    const passed: string[] = [];
    const failing: Array<{ id: string; error: string }> = [];
    for (const r of results) {
      const s = this.state.get(r.id) ?? { ok: false, failures: 0, checkedAt: 0 };
      if (r.ok) {
        if (!s.ok || !s.okWrittenAt || now - s.okWrittenAt >= OK_WRITE_EVERY_MS) {
          passed.push(r.id);
          s.okWrittenAt = now;
        }
        Object.assign(s, { ok: true, failures: 0, error: undefined });
      } else {
        Object.assign(s, { ok: false, failures: s.failures + 1, error: r.error });
        if (s.failures === FAILURES_BEFORE_UNHEALTHY) failing.push({ id: r.id, error: r.error ?? "failing" });
        s.okWrittenAt = undefined;
      }
      s.checkedAt = now;
      this.state.set(r.id, s);
    }
    await this.record(passed, failing).catch((e: unknown) => logger.warn("gateway: could not record probe results", { error: String(e) }));
  }

  private check(t: ReplicaTarget & { healthPath: string }): Promise<{ ok: boolean; error?: string }> {
    return new Promise((resolve) => {
      const req = http.get(
        {
          host: t.host,
          port: t.port,
          path: t.healthPath,
          agent: this.opts.agent,
          // the node's access guard lets the probe through only with the placement's secret, as any request
          headers: { "user-agent": "gpuforge-gateway-probe", [WORKLOAD_ACCESS_HEADER]: t.secret },
        },
        (res) => {
          res.resume();
          const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
          resolve(ok ? { ok } : { ok, error: `health check answered ${res.statusCode}` });
        },
      );
      req.setTimeout(this.opts.timeoutMs, () => req.destroy(new Error(`no answer within ${this.opts.timeoutMs} ms`)));
      req.on("error", (e) => resolve({ ok: false, error: e.message }));
    });
  }

  private async record(passed: string[], failing: Array<{ id: string; error: string }>): Promise<void> {
    if (passed.length) {
      // a passing replica is well: a starting one becomes ready, one the probes had failed is ready again
      await run(pool(), RECORD_PROBES_PASSED, [passed]);
    }
    if (failing.length) {
      await run(pool(), RECORD_PROBES_FAILING, [failing.map((f) => f.id), failing.map((f) => f.error)]);
    }
  }
}
