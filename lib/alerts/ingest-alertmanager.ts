import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { alertTarget, severityOf, wantsQuarantine } from "./alert-target";
import type { AlertmanagerWebhook } from "./alertmanager-schemas";
import { remediateNodes, type NodeFault } from "./remediate-nodes";
import { FIRE_EXTERNAL_EVENTS, GPUS_BY_UUID, NODES_BY_HOSTNAME, NODES_BY_ID, RESOLVE_EXTERNAL_EVENTS } from "./statements";

interface Resolved {
  index: number;
  fingerprint: string;
  firing: boolean;
  nodeId: string;
  clusterId: string;
  gpuId: string | null;
  label: string;
  severity: string;
  message: string;
  details: Record<string, unknown>;
  quarantine: boolean;
  alertname: string;
}

/**
 * Alerts from Prometheus' Alertmanager (dcgm-exporter's XID, ECC and thermal rules, say). Each is
 * matched to a GPU or node by its labels and kept as an external alert event, one per fingerprint
 * while it fires; resolved alerts resolve it. Alerts that ask for it (by name on the operator's list,
 * or `gpuforge_action="quarantine"`) go to the same remediation as GPUForge's own hardware faults,
 * under the same blast-radius cap. A re-sent payload changes nothing: a firing event is not fired
 * twice, a resolved one not resolved twice, and a node already decided is not decided again.
 */
export async function ingestAlertmanager(payload: AlertmanagerWebhook, opts: { cap?: number; windowS?: number } = {}) {
  const unmatched: Array<{ index: number; reason: string }> = [];
  const targets = payload.alerts.map((a) => alertTarget(a.labels));
  const ids = [...new Set(targets.flatMap((t) => (t?.by === "node_id" ? [t.nodeId] : [])))];
  const uuids = [...new Set(targets.flatMap((t) => (t?.by === "gpu_uuid" ? [t.uuid] : [])))];
  const hosts = [...new Set(targets.flatMap((t) => (t?.by === "hostname" ? [t.hostname] : [])))];
  const [byId, byUuid, byHost] = await Promise.all([
    run(pool(), NODES_BY_ID, [ids]),
    run(pool(), GPUS_BY_UUID, [uuids]),
    run(pool(), NODES_BY_HOSTNAME, [hosts]),
  ]);
  const remediateAlerts = env().ALERTMANAGER_REMEDIATE_ALERTS;
  const resolved: Resolved[] = [];
  payload.alerts.forEach((a, index) => {
    const t = targets[index];
    let node: { id: string; cluster_id: string; hostname: string } | undefined;
    let gpu: { id: string; index: number } | null = null;
    if (!t) return unmatched.push({ index, reason: "no label names a GPU or node (UUID, Hostname, instance, node, gpuforge_node_id)" });
    if (t.by === "node_id") node = byId.find((n) => n.id === t.nodeId);
    if (t.by === "gpu_uuid") {
      const g = byUuid.find((x) => x.uuid === t.uuid);
      if (g) {
        node = { id: g.node_id, cluster_id: g.cluster_id, hostname: g.hostname };
        gpu = { id: g.gpu_id, index: g.index };
      }
    }
    if (t.by === "hostname") {
      const matches = byHost.filter(
        (n) => n.hostname === t.hostname && (!t.cluster || n.cluster_name === t.cluster || n.cluster_id === t.cluster),
      );
      if (matches.length > 1)
        return unmatched.push({ index, reason: `hostname ${t.hostname} is in ${matches.length} clusters: add a cluster label` });
      node = matches[0];
    }
    if (!node) return unmatched.push({ index, reason: "no GPU or node of the fleet matches its labels" });
    const alertname = a.labels.alertname ?? "alert";
    const summary = a.annotations.summary ?? a.annotations.description ?? alertname;
    resolved.push({
      index,
      fingerprint: a.fingerprint,
      firing: a.status === "firing",
      nodeId: node.id,
      clusterId: node.cluster_id,
      gpuId: gpu?.id ?? null,
      label: gpu ? `${node.hostname} GPU ${gpu.index}` : node.hostname,
      severity: severityOf(a.labels),
      message: `${alertname} (Alertmanager): ${summary}`.slice(0, 1_000),
      details: {
        source: "alertmanager",
        alertname,
        labels: a.labels,
        annotations: a.annotations,
        starts_at: a.startsAt,
        generator_url: a.generatorURL ?? null,
        receiver: payload.receiver,
      },
      quarantine: a.status === "firing" && wantsQuarantine(a.labels, remediateAlerts),
      alertname,
    });
  });

  const firing = resolved.filter((r) => r.firing);
  const fired = firing.length
    ? await run(pool(), FIRE_EXTERNAL_EVENTS, [
        firing.map((r) => `alertmanager:${r.fingerprint}`),
        firing.map((r) => (r.gpuId ? "gpu" : "node")),
        firing.map((r) => r.gpuId ?? r.nodeId),
        firing.map((r) => r.label),
        firing.map((r) => r.clusterId),
        firing.map((r) => r.nodeId),
        firing.map((r) => r.severity),
        firing.map((r) => r.message),
        firing.map((r) => JSON.stringify(r.details)),
      ])
    : [];
  const ending = resolved.filter((r) => !r.firing);
  const ended = ending.length ? await run(pool(), RESOLVE_EXTERNAL_EVENTS, [ending.map((r) => `alertmanager:${r.fingerprint}`)]) : [];

  const eventOf = new Map(fired.map((e) => [e.dedupe_key, e.id]));
  const faults: NodeFault[] = resolved
    .filter((r) => r.quarantine)
    .map((r) => ({
      node_id: r.nodeId,
      cause: `alertmanager:${r.alertname}`.slice(0, 200),
      alert_event_id: eventOf.get(`alertmanager:${r.fingerprint}`) ?? null,
      summary: `${r.alertname} on ${r.label}`,
    }));
  const remediation = await remediateNodes(faults, opts);
  return {
    received: payload.alerts.length,
    fired: fired.length,
    resolved: ended.length,
    remediation: { quarantined: remediation.quarantined.map((q) => q.node_id), capped: remediation.capped.map((c) => c.node_id) },
    unmatched,
  };
}
