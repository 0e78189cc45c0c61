import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { getEndpointOrThrow } from "@/lib/endpoints/get-endpoint";
import { notFound } from "@/lib/errors";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { getPodOrThrow } from "@/lib/pods/queries";
import type { ReadLogsQuery, ReadReplicaLogsQuery } from "./schemas";

interface LogRow {
  seq: number;
  stream: "stdout" | "stderr" | "system";
  text: string;
  at: Date;
}

type Window = Pick<ReadLogsQuery, "after_seq" | "tail" | "before_seq" | "limit">;

/** What one page carries at most, as text (chunks go up to 16 KiB, and JSON escaping multiplies them). */
const PAGE_CHARS = 512 * 1024;

/** The longest run of rows, from the front (or, for a tail, from the back), within the page's budget; always one row at least. */
function withinBudget(rows: LogRow[], fromBack: boolean): LogRow[] {
  const ordered = fromBack ? [...rows].reverse() : rows;
  const out: LogRow[] = [];
  let chars = 0;
  for (const r of ordered) {
    if (out.length > 0 && chars + r.text.length > PAGE_CHARS) break;
    out.push(r);
    chars += r.text.length;
  }
  return fromBack ? out.reverse() : out;
}

/**
 * One page of a placement's log: onwards from after_seq (a live tail polls this way), or the last
 * `tail` chunks before before_seq (the end of a log, and further back from there); at most about
 * half a MiB of text a page, so no reader can make the server build tens of megabytes at once.
 */
async function readWindow(subject: { where: string; key: unknown[] }, q: Window) {
  const n = subject.key.length;
  const rows =
    q.tail !== undefined
      ? withinBudget(
          (
            await pool().query<LogRow>(
              `SELECT seq, stream, text, at FROM workload_logs WHERE ${subject.where} AND seq < $${n + 1} ORDER BY seq DESC LIMIT $${n + 2}`,
              [...subject.key, q.before_seq ?? 2_147_483_647, q.tail],
            )
          ).rows.reverse(),
          true,
        )
      : withinBudget(
          (
            await pool().query<LogRow>(
              `SELECT seq, stream, text, at FROM workload_logs WHERE ${subject.where} AND seq > $${n + 1} ORDER BY seq LIMIT $${n + 2}`,
              [...subject.key, q.after_seq ?? -1, q.limit],
            )
          ).rows,
          false,
        );
  const first = rows[0]?.seq;
  const earlier =
    first === undefined
      ? false
      : (await pool().query(`SELECT 1 FROM workload_logs WHERE ${subject.where} AND seq < $${n + 1} LIMIT 1`, [...subject.key, first]))
          .rowCount! > 0;
  return {
    data: rows.map((r) => ({ seq: r.seq, stream: r.stream, text: r.text, at: r.at.toISOString() })),
    next_seq: rows.at(-1)?.seq ?? q.after_seq ?? null,
    has_earlier: earlier,
  };
}

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
    return { attempt: null, data: [], next_seq: q.after_seq ?? null, has_earlier: false, truncated: false };
  }
  const page = await readWindow({ where: "job_id = $1 AND attempt = $2", key: [jobId, placement.attempt] }, q);
  return { attempt: placement.attempt, ...page, truncated: placement.log_truncated };
}

/** A pod placement's log (the latest placement unless one is named), for its tenant and operators. */
export async function readPodLogs(p: Principal, podId: string, q: ReadLogsQuery) {
  await getPodOrThrow(p, podId);
  const { rows: placements } = await pool().query<{ attempt: number; log_truncated: boolean }>(
    `SELECT attempt, log_truncated FROM pod_placements WHERE pod_id = $1 AND ($2::int IS NULL OR attempt = $2) ORDER BY attempt DESC LIMIT 1`,
    [podId, q.attempt ?? null],
  );
  const placement = placements[0];
  if (!placement) {
    if (q.attempt) throw notFound("Attempt");
    return { attempt: null, data: [], next_seq: q.after_seq ?? null, has_earlier: false, truncated: false };
  }
  const page = await readWindow({ where: "pod_id = $1 AND attempt = $2", key: [podId, placement.attempt] }, q);
  return { attempt: placement.attempt, ...page, truncated: placement.log_truncated };
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
    return { replica_id: null, data: [], next_seq: q.after_seq ?? null, has_earlier: false, truncated: false };
  }
  const page = await readWindow({ where: "replica_id = $1", key: [replica.id] }, q);
  return { replica_id: replica.id, ...page, truncated: replica.log_truncated };
}
