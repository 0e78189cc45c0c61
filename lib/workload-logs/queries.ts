import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { getEndpointOrThrow } from "@/lib/endpoints/endpoints";
import { notFound } from "@/lib/errors";
import { getJobOrThrow } from "@/lib/jobs/queries";
import type { ReadLogsQuery, ReadReplicaLogsQuery } from "./schemas";

interface LogRow {
  seq: number;
  stream: "stdout" | "stderr" | "system";
  text: string;
  at: Date;
}

const lines = (rows: LogRow[]) => rows.map((r) => ({ seq: r.seq, stream: r.stream, text: r.text, at: r.at.toISOString() }));
const nextSeq = (rows: LogRow[], after: number | undefined) => rows.at(-1)?.seq ?? after ?? null;

/** A job attempt's log (the latest attempt unless one is named), for its tenant and operators. */
export async function readJobLogs(p: Principal, jobId: string, q: ReadLogsQuery) {
  await getJobOrThrow(p, jobId);
  const { rows: placements } = await pool().query<{ attempt: number; log_truncated: boolean }>(
    `SELECT attempt, log_truncated FROM job_placements WHERE job_id = $1 AND ($2::int IS NULL OR attempt = $2) ORDER BY attempt DESC LIMIT 1`,
    [jobId, q.attempt ?? null],
  );
  const placement = placements[0];
  if (!placement) {
    if (q.attempt) throw notFound("Attempt");
    return { attempt: null, data: [], next_seq: q.after_seq ?? null, truncated: false };
  }
  const { rows } = await pool().query<LogRow>(
    `SELECT seq, stream, text, at FROM workload_logs WHERE job_id = $1 AND attempt = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
    [jobId, placement.attempt, q.after_seq ?? -1, q.limit],
  );
  return { attempt: placement.attempt, data: lines(rows), next_seq: nextSeq(rows, q.after_seq), truncated: placement.log_truncated };
}

/** An endpoint replica's log (the newest replica unless one is named), for its tenant and operators. */
export async function readReplicaLogs(p: Principal, endpointId: string, q: ReadReplicaLogsQuery) {
  await getEndpointOrThrow(p, endpointId);
  const { rows: replicas } = await pool().query<{ id: string; log_truncated: boolean }>(
    `SELECT id, log_truncated FROM endpoint_replicas WHERE endpoint_id = $1 AND ($2::uuid IS NULL OR id = $2::uuid) ORDER BY started_at DESC LIMIT 1`,
    [endpointId, q.replica_id ?? null],
  );
  const replica = replicas[0];
  if (!replica) {
    if (q.replica_id) throw notFound("Replica");
    return { replica_id: null, data: [], next_seq: q.after_seq ?? null, truncated: false };
  }
  const { rows } = await pool().query<LogRow>(`SELECT seq, stream, text, at FROM workload_logs WHERE replica_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [
    replica.id,
    q.after_seq ?? -1,
    q.limit,
  ]);
  return { replica_id: replica.id, data: lines(rows), next_seq: nextSeq(rows, q.after_seq), truncated: replica.log_truncated };
}
