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
  // a key whose owner (a person or a service account) was disabled is no key, whichever kind it is
  text: `SELECT 'endpoint' AS kind, k.id, k.endpoint_id, k.tenant_id, (t.status = 'active' AND e.deleted_at IS NULL) AS active, k.last_used_at, k.expires_at
             FROM endpoint_keys k JOIN tenants t ON t.id = k.tenant_id JOIN endpoints e ON e.id = k.endpoint_id
                  LEFT JOIN users u ON u.id = k.owner_user_id LEFT JOIN service_accounts s ON s.id = k.service_account_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
              AND COALESCE(u.disabled_at, s.disabled_at) IS NULL AND (u.id IS NOT NULL OR s.id IS NOT NULL)
           UNION ALL
           SELECT k.scope, k.id, NULL, k.tenant_id, COALESCE(t.status = 'active', true), k.last_used_at, k.expires_at
             FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id
                  LEFT JOIN users u ON u.id = k.owner_user_id LEFT JOIN service_accounts s ON s.id = k.service_account_id
            WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
              AND COALESCE(u.disabled_at, s.disabled_at) IS NULL AND (u.id IS NOT NULL OR s.id IS NOT NULL)`,
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

/**
 * Every endpoint the gateway routes to, with its candidate replicas: live, their agent's access
 * guard reported a port, their node in service with an address (whether they take traffic is the
 * prober's call). Each replica's fence names its placement, whose access secret the gateway sends.
 */
export const GATEWAY_ENDPOINT_ROUTES = statement("gateway.endpoint-routes", {
  params: [],
  columns: { id: "uuid", tenant_id: "uuid", health_path: "text", stop_requested: "bool", replicas: "json" },
  prepare: true,
  text: `SELECT e.id, e.tenant_id, e.health_path, e.stop_requested,
                COALESCE(json_agg(json_build_object('id', r.id, 'host', n.address, 'port', r.host_port, 'fence', r.fence) ORDER BY r.started_at)
                           FILTER (WHERE r.id IS NOT NULL), '[]') AS replicas
           FROM endpoints e
           LEFT JOIN (endpoint_replicas r JOIN nodes n ON n.id = r.node_id AND n.address IS NOT NULL AND n.status IN ('available', 'draining'))
                  ON r.endpoint_id = e.id AND r.status <> 'stopped' AND r.host_port IS NOT NULL
          WHERE e.deleted_at IS NULL
          GROUP BY e.id`,
});

/**
 * Every running pod the gateway routes to: its open placement (fence, published ports) on a node in
 * service with an address. A pod's HTTP ports are reached only through the gateway (and SSH).
 */
export const GATEWAY_POD_ROUTES = statement("gateway.pod-routes", {
  params: [],
  columns: { id: "uuid", tenant_id: "uuid", fence: "text", host: "text", ports: "jsonb", has_ssh_key: "bool" },
  prepare: true,
  text: `SELECT p.id, p.tenant_id, pl.fence::text AS fence, n.address AS host, pl.ports, p.ssh_public_key IS NOT NULL AS has_ssh_key
           FROM pods p
           JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts AND pl.ended_at IS NULL AND pl.running_at IS NOT NULL
           JOIN nodes n ON n.id = pl.node_id AND n.address IS NOT NULL AND n.status IN ('available', 'draining')
          WHERE p.status = 'running'`,
});
