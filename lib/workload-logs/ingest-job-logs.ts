import "server-only";
import type { AgentPrincipal } from "@/lib/auth/principal";
import { run } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { notFound, staleReport } from "@/lib/errors";
import { GroupCommit } from "@/lib/metrics/group-commit";
import type { AppendLogsInput } from "./schemas";
import { LOCK_JOB_LOG_PLACEMENTS, STORE_JOB_LOG_CHUNKS, TRIM_JOB_LOG_OVER_CAP } from "./statements";

// Job log chunks, as agents ship them (POST /api/jobs/{id}/logs, on the app and on the ingest
// server): group commit, as for metrics. While a group is being stored the requests that arrive
// queue, and the next group takes them all: one transaction of two statements stores the chunks of
// every request in it (lib/workload-logs/statements.ts), where each request used to take a
// transaction of five round trips of its own; a chunk stored before is left to the unique index,
// not looked up first. Each request keeps its own answer: fenced like exit
// reports (a chunk of a placement the job has moved on from answers 409 stale_report and stores
// nothing), each (attempt, seq) stored once however often it is re-sent, a run's log capped at
// WORKLOAD_LOG_MAX_BYTES with a marker, the placement's row locked while its chunks are written.

const MAX_FUTURE_MS = 5 * 60_000;
/** chunks one group stores at most: a few dozen agents' batches */
const MAX_GROUP_CHUNKS = 5_000;

export interface AppendLogsResult {
  accepted: number;
  stored: number;
  truncated: boolean;
}

interface LogRequest {
  jobId: string;
  attempt: number;
  fence: string;
  clusterId: string;
  nodeId: string | null;
  chunks: Array<{ seq: number; stream: string; text: string; at: string }>;
}

type Outcome = AppendLogsResult | { refused: "stale" | "closed" | "unknown" };

export function truncationMarker(capBytes: number): string {
  return `[GPUForge] This run's log reached its cap of ${(capBytes / 1024 / 1024).toFixed(capBytes % (1024 * 1024) ? 1 : 0)} MiB; later output was dropped.\n`;
}

async function storeGroup(requests: LogRequest[]): Promise<Outcome[]> {
  return inTransaction(async (c) => {
    const placements = await run(c, LOCK_JOB_LOG_PLACEMENTS, [
      requests.map((r) => r.jobId),
      requests.map((r) => r.attempt),
      requests.map((r) => r.fence),
      requests.map((r) => r.clusterId),
      requests.map((r) => r.nodeId),
    ]);
    const byReq = new Map(placements.map((p) => [Number(p.req) - 1, p]));
    const outcomes: Outcome[] = requests.map((r, i) => {
      const p = byReq.get(i)!;
      if (!p.matched) return { refused: p.known ? "stale" : "unknown" };
      if (!p.latest) return { refused: "closed" };
      if (p.truncated) return { accepted: r.chunks.length, stored: 0, truncated: true };
      return { accepted: r.chunks.length, stored: 0, truncated: false };
    });
    const open = requests.flatMap((r, i) => {
      const o = outcomes[i]!;
      return "refused" in o || o.truncated ? [] : [{ i, r, logBytes: byReq.get(i)!.log_bytes! }];
    });
    if (open.length === 0) return outcomes;
    const chunkReq: number[] = [];
    const seqs: number[] = [];
    const streams: string[] = [];
    const texts: string[] = [];
    const ats: string[] = [];
    for (const { i, r } of open)
      for (const ch of r.chunks) {
        chunkReq.push(i);
        seqs.push(ch.seq);
        streams.push(ch.stream);
        texts.push(ch.text);
        ats.push(ch.at);
      }
    const cap = env().WORKLOAD_LOG_MAX_BYTES;
    const stored = await run(c, STORE_JOB_LOG_CHUNKS, [
      chunkReq,
      seqs,
      streams,
      texts,
      ats,
      open.map((o) => o.i),
      open.map((o) => o.r.jobId),
      open.map((o) => o.r.attempt),
      open.map((o) => o.logBytes),
      cap,
    ]);
    const count = new Map<number, number>();
    for (const s of stored) if (s.req !== null) count.set(s.req, s.stored);
    // a placement whose new chunks passed the cap (rare): cut it where the old path stopped
    for (const over of stored.filter((s) => s.over_job_id !== null)) {
      const mine = open.filter((o) => o.r.jobId === over.over_job_id && o.r.attempt === over.over_attempt);
      const trim = (
        await run(c, TRIM_JOB_LOG_OVER_CAP, [over.over_job_id!, over.over_attempt!, mine[0]!.logBytes, cap, truncationMarker(cap)])
      )[0]!;
      // each removed chunk was counted for the first request of the group that sent it
      for (const seq of trim.removed) {
        const owner = mine.find((o) => o.r.chunks.some((ch) => ch.seq === seq))!;
        count.set(owner.i, (count.get(owner.i) ?? 0) - 1);
      }
      for (const o of mine) (outcomes[o.i] as AppendLogsResult).truncated = true;
    }
    for (const { i } of open) (outcomes[i] as AppendLogsResult).stored = count.get(i) ?? 0;
    return outcomes;
  });
}

const globalForLogs = globalThis as unknown as { jobLogsGroupCommit?: GroupCommit<LogRequest, Outcome> };
function groupCommit() {
  globalForLogs.jobLogsGroupCommit ??= new GroupCommit(storeGroup, {
    maxInFlight: Math.min(env().INGEST_MAX_STATEMENTS, env().DATABASE_POOL_SIZE),
    maxWeight: MAX_GROUP_CHUNKS,
    minWeightBeyondFirst: 500,
    // one request's problem never fails the requests it was grouped with
    retryAloneOnError: true,
  });
  return globalForLogs.jobLogsGroupCommit;
}

/**
 * Stores a job attempt's output chunks, sent by the agent of the node it ran on. Fenced like exit
 * reports: the chunks must name the job's latest placement by attempt and fence (its log may still
 * arrive after the run ended), and chunks of a placement the job has moved on from answer 409
 * stale_report and store nothing; a job the agent never ran answers 404.
 */
export async function appendJobLogs(p: AgentPrincipal, jobId: string, input: AppendLogsInput): Promise<AppendLogsResult> {
  const now = Date.now();
  const chunks = input.chunks.map((ch) => ({
    seq: ch.seq,
    stream: ch.stream,
    text: ch.text,
    // a time from the agent's clock, unless it lies too far ahead
    at: ch.at && new Date(ch.at).getTime() <= now + MAX_FUTURE_MS ? ch.at : new Date(now).toISOString(),
  }));
  const outcome = await groupCommit().submit(
    { jobId, attempt: input.attempt, fence: input.fence, clusterId: p.clusterId, nodeId: p.nodeId ?? null, chunks },
    chunks.length,
  );
  if (!("refused" in outcome)) return outcome;
  if (outcome.refused === "closed") throw staleReport("The job has been placed again since; this placement's log is closed");
  throw outcome.refused === "stale" ? staleReport() : notFound("Job");
}
