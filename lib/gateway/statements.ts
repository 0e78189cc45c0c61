import { statement } from "@/lib/db/statement";

// The gateway's raw statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts.

/** The gateway's per-minute figures of the endpoints $1 from the minute before $2 until $3 (counts as text: bigint). */
export const GATEWAY_MINUTES = statement("gateway.minutes", {
  params: ["uuid[]", "timestamptz", "timestamptz"],
  columns: { endpoint_id: "text", bucket: "timestamptz", requests: "text", errors: "text", latency_hist: "text[]" },
  text: `SELECT endpoint_id::text, bucket, requests::text, errors::text, latency_hist::text[] FROM endpoint_gateway_1m
      WHERE endpoint_id = ANY($1::uuid[]) AND bucket >= date_trunc('minute', $2::timestamptz) - interval '1 minute' AND bucket < $3 ORDER BY bucket`,
});

/** Who calls with the key hash $1: an endpoint key, or an API key (its scope as the kind). Runs on every uncached call. */
export const GATEWAY_CALLER = statement("gateway.caller", {
  params: ["text"],
  columns: {
    kind: "text",
    id: "uuid",
    endpoint_id: "uuid?",
    tenant_id: "uuid?",
    active: "bool",
    last_used_at: "timestamptz?",
    expires_at: "timestamptz?",
  },
  prepare: true,
  text: `SELECT 'endpoint' AS kind, k.id, k.endpoint_id, k.tenant_id, (t.status = 'active' AND e.deleted_at IS NULL) AS active, k.last_used_at, k.expires_at
             FROM endpoint_keys k JOIN tenants t ON t.id = k.tenant_id JOIN endpoints e ON e.id = k.endpoint_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
           UNION ALL
           SELECT k.scope, k.id, NULL, k.tenant_id, COALESCE(t.status = 'active', true), k.last_used_at, k.expires_at
             FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id LEFT JOIN users u ON u.id = k.created_by_user_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
});

/** Marks the endpoint key $1 used (at most once a minute). */
export const TOUCH_ENDPOINT_KEY = statement("gateway.touch-endpoint-key", {
  params: ["uuid"],
  columns: {},
  text: `UPDATE endpoint_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
});

/** Replicas ($1) whose probe passed are well: a starting one becomes ready, one the probes had failed is ready again. */
export const RECORD_PROBES_PASSED = statement("gateway.record-probes-passed", {
  params: ["uuid[]"],
  columns: {},
  text: `UPDATE endpoint_replicas SET last_probe_ok_at = now(), probe_failing_since = NULL,
                status = CASE WHEN status = 'starting' OR (status = 'unhealthy' AND probe_failing_since IS NOT NULL) THEN 'ready' ELSE status END,
                ready_at = CASE WHEN status = 'starting' THEN COALESCE(ready_at, now()) ELSE ready_at END,
                unhealthy_since = CASE WHEN status = 'unhealthy' AND probe_failing_since IS NOT NULL THEN NULL ELSE unhealthy_since END,
                health_reason = CASE WHEN status = 'unhealthy' AND probe_failing_since IS NOT NULL THEN NULL ELSE health_reason END
          WHERE id = ANY($1::uuid[]) AND status <> 'stopped'`,
});

/** Ready replicas ($1) whose probe failed ($2: why, by position) become unhealthy. */
export const RECORD_PROBES_FAILING = statement("gateway.record-probes-failing", {
  params: ["uuid[]", "text[]"],
  columns: {},
  text: `UPDATE endpoint_replicas r SET probe_failing_since = COALESCE(r.probe_failing_since, now()), status = 'unhealthy',
                unhealthy_since = COALESCE(r.unhealthy_since, now()), health_reason = 'gateway health probe failing: ' || left(x.error, 200)
           FROM unnest($1::uuid[], $2::text[]) AS x(id, error)
          WHERE r.id = x.id AND r.status = 'ready'`,
});

/** Adds a batch of per-minute figures ($1: JSON records) to the endpoints' minutes; an endpoint deleted meanwhile is skipped. */
export const ADD_GATEWAY_MINUTES = statement("gateway.add-minutes", {
  params: ["json"],
  columns: {},
  text: `INSERT INTO endpoint_gateway_1m (endpoint_id, bucket, requests, errors, latency_hist)
         SELECT x.endpoint_id, to_timestamp(x.bucket / 1000.0), x.requests, x.errors, ARRAY(SELECT h::bigint FROM json_array_elements_text(x.hist) h)
           FROM json_to_recordset($1::json) AS x(endpoint_id uuid, bucket bigint, requests bigint, errors bigint, hist json)
          WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = x.endpoint_id)
         ON CONFLICT (endpoint_id, bucket) DO UPDATE SET
           requests = endpoint_gateway_1m.requests + EXCLUDED.requests,
           errors = endpoint_gateway_1m.errors + EXCLUDED.errors,
           latency_hist = ARRAY(SELECT COALESCE(a, 0) + COALESCE(b, 0) FROM unnest(endpoint_gateway_1m.latency_hist, EXCLUDED.latency_hist) WITH ORDINALITY AS u(a, b, i) ORDER BY i)`,
});
