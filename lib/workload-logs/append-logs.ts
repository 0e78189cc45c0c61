import "server-only";
import type pg from "pg";
import type { AgentPrincipal } from "@/lib/auth/principal";
import { columnSet } from "@/lib/db/column-set";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { notFound, staleReport } from "@/lib/errors";
import { truncationMarker, type AppendLogsResult } from "./ingest-job-logs";
import type { AppendLogsInput, LogChunk } from "./schemas";

const MAX_FUTURE_MS = 5 * 60_000;
/** The chunks to store ($4-$7). */
const CHUNKS = columnSet({ seq: "int[]", stream: "text[]", text: "text[]", at: "timestamptz[]" });

type Subject = { kind: "replica"; replicaId: string } | { kind: "pod"; podId: string; attempt: number };

// job logs take the group-commit path (./ingest-job-logs.ts); replicas' and pods' stay one request a transaction
export { appendJobLogs, truncationMarker } from "./ingest-job-logs";

/** An endpoint replica's output chunks, from the agent of its node, while the replica is live. */
export async function appendReplicaLogs(
  p: AgentPrincipal,
  endpointId: string,
  replicaId: string,
  input: AppendLogsInput,
): Promise<AppendLogsResult> {
  return inTransaction(async (c) => {
    const { rows } = await c.query<{ log_bytes: string; log_truncated: boolean; live: boolean; fence_ok: boolean }>(
      `SELECT r.log_bytes, r.log_truncated, r.status <> 'stopped' AS live, (r.fence = $3 AND $4 = 1) AS fence_ok
         FROM endpoint_replicas r JOIN nodes n ON n.id = r.node_id
        WHERE r.id = $1 AND r.endpoint_id = $2 AND n.cluster_id = $5 AND ($6::uuid IS NULL OR n.id = $6::uuid)
        FOR UPDATE OF r`,
      [replicaId, endpointId, input.fence, input.attempt, p.clusterId, p.nodeId ?? null],
    );
    const replica = rows[0];
    if (!replica) throw notFound("Replica");
    if (!replica.fence_ok || !replica.live) throw staleReport();
    return storeChunks(c, { kind: "replica", replicaId }, input.chunks, {
      logBytes: Number(replica.log_bytes),
      truncated: replica.log_truncated,
    });
  });
}

/**
 * A pod placement's output chunks, from the agent of the node it ran on: the pod's latest
 * placement, named by attempt and fence (its last output may arrive after it stopped), on one of
 * the agent's nodes. An older placement answers 409 stale_report; a pod this agent never ran, 404.
 */
export async function appendPodLogs(p: AgentPrincipal, podId: string, input: AppendLogsInput): Promise<AppendLogsResult> {
  return inTransaction(async (c) => {
    const { rows } = await c.query<{ log_bytes: string; log_truncated: boolean; current: boolean; ours: boolean }>(
      `SELECT pl.log_bytes, pl.log_truncated, (pl.attempt = pd.attempts AND pl.fence = $3) AS current,
              EXISTS (SELECT 1 FROM nodes n WHERE n.id = pl.node_id AND n.cluster_id = $4 AND ($5::uuid IS NULL OR n.id = $5::uuid)) AS ours
         FROM pod_placements pl JOIN pods pd ON pd.id = pl.pod_id
        WHERE pl.pod_id = $1 AND pl.attempt = $2
        FOR UPDATE OF pl`,
      [podId, input.attempt, input.fence, p.clusterId, p.nodeId ?? null],
    );
    const placement = rows[0];
    if (!placement?.ours) {
      const { rows: known } = await c.query(
        `SELECT 1 FROM pod_placements pl JOIN nodes n ON n.id = pl.node_id WHERE pl.pod_id = $1 AND n.cluster_id = $2 AND ($3::uuid IS NULL OR n.id = $3::uuid) LIMIT 1`,
        [podId, p.clusterId, p.nodeId ?? null],
      );
      throw known.length ? staleReport() : notFound("Pod");
    }
    if (!placement.current) throw staleReport("The pod has been placed again since; this placement's log is closed");
    return storeChunks(c, { kind: "pod", podId, attempt: input.attempt }, input.chunks, {
      logBytes: Number(placement.log_bytes),
      truncated: placement.log_truncated,
    });
  });
}

/**
 * Writes the chunks not stored yet, in seq order, until the run's cap: the first chunk that would
 * pass it is stored as a truncation marker in its place, and the rest are acknowledged but dropped.
 */
async function storeChunks(
  c: pg.PoolClient,
  subject: Subject,
  chunks: LogChunk[],
  state: { logBytes: number; truncated: boolean },
): Promise<AppendLogsResult> {
  if (state.truncated) return { accepted: chunks.length, stored: 0, truncated: true };
  const where = subject.kind === "pod" ? `pod_id = $1 AND attempt = $2` : `replica_id = $1`;
  const key = subject.kind === "pod" ? [subject.podId, subject.attempt] : [subject.replicaId];
  const { rows: existing } = await c.query<{ seq: number }>(
    `SELECT seq FROM workload_logs WHERE ${where} AND seq = ANY($${key.length + 1}::int[])`,
    [...key, chunks.map((x) => x.seq)],
  );
  const known = new Set(existing.map((r) => r.seq));
  const cap = env().WORKLOAD_LOG_MAX_BYTES;
  const now = Date.now();
  let budget = cap - state.logBytes;
  let truncated = false;
  const rows: Array<{ seq: number; stream: string; text: string; at: Date; bytes: number }> = [];
  for (const chunk of [...chunks].sort((a, b) => a.seq - b.seq)) {
    if (known.has(chunk.seq)) continue;
    const bytes = Buffer.byteLength(chunk.text, "utf8");
    const at = chunk.at && new Date(chunk.at).getTime() <= now + MAX_FUTURE_MS ? new Date(chunk.at) : new Date(now);
    if (bytes > budget) {
      rows.push({ seq: chunk.seq, stream: "system", text: truncationMarker(cap), at, bytes: 0 });
      truncated = true;
      break;
    }
    budget -= bytes;
    rows.push({ seq: chunk.seq, stream: chunk.stream, text: chunk.text, at, bytes });
  }
  if (rows.length === 0) return { accepted: chunks.length, stored: 0, truncated: false };
  const conflict =
    subject.kind === "pod" ? `(pod_id, attempt, seq) WHERE pod_id IS NOT NULL` : `(replica_id, seq) WHERE replica_id IS NOT NULL`;
  const chunkRows = CHUNKS.bindRows(
    rows,
    { seq: (r) => r.seq, stream: (r) => r.stream, text: (r) => r.text, at: (r) => r.at.toISOString() },
    4,
  );
  const inserted = await c.query<{ seq: number }>(
    `INSERT INTO workload_logs (job_id, attempt, replica_id, pod_id, seq, stream, text, at)
     SELECT $1::uuid, $2::int, $3::uuid, $8::uuid, x.seq, x.stream, x.text, x.at FROM ${chunkRows.sql}
     ON CONFLICT ${conflict} DO NOTHING RETURNING seq`,
    [
      null,
      subject.kind === "replica" ? null : subject.attempt,
      subject.kind === "replica" ? subject.replicaId : null,
      ...chunkRows.values,
      subject.kind === "pod" ? subject.podId : null,
    ],
  );
  const stored = new Set(inserted.rows.map((r) => r.seq));
  const added = rows.filter((r) => stored.has(r.seq)).reduce((s, r) => s + r.bytes, 0);
  const table =
    subject.kind === "pod"
      ? `pod_placements SET log_bytes = log_bytes + $3, log_truncated = log_truncated OR $4 WHERE pod_id = $1 AND attempt = $2`
      : `endpoint_replicas SET log_bytes = log_bytes + $2, log_truncated = log_truncated OR $3 WHERE id = $1`;
  await c.query(`UPDATE ${table}`, [...key, added, truncated]);
  return { accepted: chunks.length, stored: stored.size, truncated };
}
