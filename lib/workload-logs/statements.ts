import { statement } from "@/lib/db/statement";

// Workload logs' raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. The two below store the job log chunks of many agents'
// requests at once (lib/workload-logs/ingest-job-logs.ts), in one transaction. Neither is prepared:
// planned with its arrays' real sizes each time; the generic plan PostgreSQL switches a prepared
// statement to after five runs checked each chunk against the whole table (2 s a group, not 100 ms).

/**
 * The placements the requests name, locked: one element per request ($1 job, $2 attempt, $3 fence,
 * $4 the agent's cluster, $5 its node when the key is bound to one), answered by request (`req`,
 * from 1). A request whose attempt and fence are not one of the job's placements on the agent's
 * nodes is unmatched (`known`: the agent ran some placement of the job, so it is stale rather
 * than none of its business). Rows are locked in placement order, so two groups never deadlock.
 */
export const LOCK_JOB_LOG_PLACEMENTS = statement("workload-logs.lock-job-placements", {
  params: ["uuid[]", "int4[]", "uuid[]", "uuid[]", "uuid[]"],
  columns: { req: "int8", matched: "bool", log_bytes: "int8?", truncated: "bool?", latest: "bool?", known: "bool?" },
  text: `WITH r AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::uuid[], $5::uuid[]) WITH ORDINALITY AS r(job_id, attempt, fence, scope, node_scope, req)
     ), locked AS (
       SELECT r.req, jp.log_bytes, jp.log_truncated, (j.attempts = jp.attempt) AS latest
         FROM r JOIN job_placements jp ON jp.job_id = r.job_id AND jp.attempt = r.attempt AND jp.fence = r.fence
         JOIN jobs j ON j.id = jp.job_id
        WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.id = ANY(jp.node_ids) AND n.cluster_id = r.scope AND (r.node_scope IS NULL OR n.id = r.node_scope))
        ORDER BY jp.job_id, jp.attempt
          FOR UPDATE OF jp
     )
     SELECT r.req, l.req IS NOT NULL AS matched, l.log_bytes, l.log_truncated AS truncated, l.latest,
            CASE WHEN l.req IS NULL THEN EXISTS (
              SELECT 1 FROM job_placements jp JOIN nodes n ON n.id = ANY(jp.node_ids)
               WHERE jp.job_id = r.job_id AND n.cluster_id = r.scope AND (r.node_scope IS NULL OR n.id = r.node_scope)) END AS known
       FROM r LEFT JOIN locked l ON l.req = r.req`,
});

/**
 * The chunks of the requests whose placement was locked and is open for logs: one element per
 * chunk ($1 its request, $2 seq, $3 stream, $4 text, $5 time) and one per such request ($6 the
 * request, $7 job, $8 attempt, $9 the placement's log bytes), $10 the cap. A chunk sent twice in
 * the group is inserted once (for the first request that sent it) and one stored before is left
 * alone by the unique index itself, so nothing is looked up first. Each placement's byte count
 * moves by what was stored, unless that would pass the cap: those placements come back as
 * `over` (rare), for TRIM_JOB_LOG_OVER_CAP to cut in the same transaction. Answers by request
 * (chunks stored) and by placement over the cap.
 */
export const STORE_JOB_LOG_CHUNKS = statement("workload-logs.store-job-chunks", {
  params: ["int4[]", "int4[]", "text[]", "text[]", "timestamptz[]", "int4[]", "uuid[]", "int4[]", "int8[]", "int8"],
  columns: { req: "int4?", stored: "int4", over_job_id: "uuid?", over_attempt: "int4?" },
  text: `WITH chunks AS (
       SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::timestamptz[]) AS c(req, seq, stream, text, at)
     ), open AS (
       SELECT * FROM unnest($6::int[], $7::uuid[], $8::int[], $9::bigint[]) AS p(req, job_id, attempt, log_bytes)
     ), fresh AS (
       SELECT DISTINCT ON (p.job_id, p.attempt, c.seq) p.job_id, p.attempt, c.seq, c.stream, c.text, c.at, c.req
         FROM chunks c JOIN open p ON p.req = c.req
        ORDER BY p.job_id, p.attempt, c.seq, c.req
     ), ins AS (
       INSERT INTO workload_logs (job_id, attempt, seq, stream, text, at)
       SELECT job_id, attempt, seq, stream, text, at FROM fresh
       ON CONFLICT (job_id, attempt, seq) WHERE job_id IS NOT NULL DO NOTHING
       RETURNING job_id, attempt, seq, octet_length(text) AS bytes
     ), totals AS (
       SELECT t.job_id, t.attempt, t.bytes, t.bytes + b.log_bytes > $10 AS over
         FROM (SELECT job_id, attempt, sum(bytes) AS bytes FROM ins GROUP BY job_id, attempt) t
         JOIN (SELECT DISTINCT job_id, attempt, log_bytes FROM open) b USING (job_id, attempt)
     ), counted AS (
       UPDATE job_placements jp SET log_bytes = jp.log_bytes + t.bytes
         FROM totals t WHERE NOT t.over AND jp.job_id = t.job_id AND jp.attempt = t.attempt
     )
     SELECT f.req, count(*)::int AS stored, NULL::uuid AS over_job_id, NULL::int AS over_attempt
       FROM ins JOIN fresh f USING (job_id, attempt, seq) GROUP BY f.req
     UNION ALL
     SELECT NULL, 0, job_id, attempt FROM totals WHERE over`,
});

/**
 * A placement whose new chunks passed the cap ($1 job, $2 attempt, $3 its log bytes before them,
 * $4 the cap, $5 the marker): of what this transaction stored, the chunks in seq order that fit
 * stay, the first that does not becomes the marker, the rest are removed; the placement's log is
 * closed. Answers the chunks removed (their seqs) and the marker's seq.
 */
export const TRIM_JOB_LOG_OVER_CAP = statement("workload-logs.trim-job-over-cap", {
  params: ["uuid", "int4", "int8", "int8", "text"],
  columns: { removed: "int4[]", marker: "int4?" },
  text: `WITH mine AS (
       SELECT id, seq, $3 + sum(octet_length(text)) OVER (ORDER BY seq) AS total
         FROM workload_logs WHERE job_id = $1 AND attempt = $2 AND xmin = pg_current_xact_id()::xid
     ), cut AS (
       SELECT min(seq) AS seq FROM mine WHERE total > $4
     ), marked AS (
       UPDATE workload_logs w SET stream = 'system', text = $5 FROM mine, cut WHERE w.id = mine.id AND mine.seq = cut.seq
     ), removed AS (
       DELETE FROM workload_logs w USING mine, cut WHERE w.id = mine.id AND mine.seq > cut.seq RETURNING mine.seq
     ), closed AS (
       UPDATE job_placements jp
          SET log_bytes = $3 + COALESCE((SELECT sum(octet_length(w.text)) FROM workload_logs w JOIN mine ON mine.id = w.id, cut WHERE mine.seq < cut.seq), 0),
              log_truncated = true
        WHERE jp.job_id = $1 AND jp.attempt = $2
     )
     SELECT COALESCE((SELECT array_agg(seq) FROM removed), '{}') AS removed, (SELECT seq FROM cut) AS marker`,
});
