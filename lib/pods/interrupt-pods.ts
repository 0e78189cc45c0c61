import "server-only";
import type { SqlClient } from "@/lib/db/client";
import { movePods } from "./move-pods";
import { podTransition, type PodStatus } from "./pod-lifecycle";

/**
 * Pods on nodes that left service (quarantined, in maintenance, offline), in the caller's
 * transaction. A pod is stateful: it is not silently run again elsewhere. It is marked failed
 * (interrupted) and its tenant alerted, unless the tenant asked for restart_on_failure, in which
 * case it is placed again (its container's state does not survive, and the alert says so). Its
 * GPUs are released and its billing ends either way. A pod that was stopping is simply stopped.
 */
export async function interruptPodsOnNodes(c: SqlClient, nodeIds: string[], why: string, actor: string): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const { rows } = await c.query<{ id: string; status: PodStatus; restart_on_failure: boolean }>(
    `SELECT id::text, status, restart_on_failure FROM pods WHERE node_id = ANY($1::uuid[]) AND status IN ('starting', 'running', 'stopping') ORDER BY id FOR UPDATE`,
    [nodeIds],
  );
  const moves = rows.map((r) => {
    const t = podTransition(r.status, { kind: "lost", restartOnFailure: r.restart_on_failure });
    const to = t.ok ? t.to : r.status;
    const reason =
      r.status === "stopping" ? `stopped: ${why}` : to === "pending" ? `interrupted: ${why}; placed again (restart on failure), its container starts fresh` : `interrupted: ${why}; start it again when you are ready`;
    return { id: r.id, from: r.status, to, reason };
  });
  await movePods(c, moves, actor);
  const interrupted = moves.filter((m) => m.from !== "stopping");
  if (interrupted.length) {
    // each tenant hears that its pod stopped, and why; it resolves once the pod runs again or the tenant acts
    await c.query(
      `INSERT INTO alert_events (rule_type, dedupe_key, subject_type, subject_id, subject_label, cluster_id, node_id, tenant_id, severity, message, details)
       SELECT 'pod_interrupted', 'pod_interrupted:' || p.id, 'pod', p.id::text, p.name, n.cluster_id, n.id, p.tenant_id, 'warning',
              'Pod ' || p.name || ' was interrupted: ' || $2 || CASE WHEN p.status = 'pending' THEN '. It is being placed again (restart on failure); its container starts fresh.' ELSE '. Start it again when you are ready.' END,
              jsonb_build_object('cause', $2::text, 'restarting', p.status = 'pending')
         FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts JOIN nodes n ON n.id = pl.node_id
        WHERE p.id = ANY($1::uuid[])
       ON CONFLICT (dedupe_key) WHERE status = 'firing' DO UPDATE SET last_seen_at = now(), details = EXCLUDED.details, message = EXCLUDED.message`,
      [interrupted.map((m) => m.id), why],
    );
  }
  return interrupted.map((m) => m.id);
}
