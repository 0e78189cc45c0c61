// Which GPU or node an external alert is about, from its labels: pure. dcgm-exporter labels a
// GPU's series with `UUID`, `gpu` and `Hostname`; node exporters and kube-state-metrics use
// `instance` (host:port), `node` or `hostname`. GPUForge's own labels win when present.

import { isUuid } from "@/lib/ids";
import type { Severity } from "./rule-types";

export type AlertTarget =
  { by: "node_id"; nodeId: string } | { by: "gpu_uuid"; uuid: string } | { by: "hostname"; hostname: string; cluster: string | null };

export function alertTarget(labels: Record<string, string>): AlertTarget | null {
  const nodeId = labels.gpuforge_node_id;
  if (isUuid(nodeId)) return { by: "node_id", nodeId };
  const uuid = labels.gpu_uuid ?? labels.UUID ?? labels.uuid;
  if (uuid && /^GPU-/i.test(uuid)) return { by: "gpu_uuid", uuid };
  const host =
    labels.gpuforge_hostname ?? labels.Hostname ?? labels.hostname ?? labels.node ?? labels.nodename ?? hostOfInstance(labels.instance);
  if (host) return { by: "hostname", hostname: host, cluster: labels.gpuforge_cluster ?? labels.cluster ?? null };
  return null;
}

/** `gpu-node-001:9400` → `gpu-node-001`; `[fd00::1]:9400` → `fd00::1`. */
function hostOfInstance(instance: string | undefined): string | undefined {
  if (!instance) return undefined;
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(instance);
  if (v6) return v6[1];
  return instance.replace(/:\d+$/, "") || undefined;
}

/** Alertmanager's severity label, in GPUForge's three levels (unknown values are warnings). */
export function severityOf(labels: Record<string, string>): Severity {
  const s = (labels.severity ?? "").toLowerCase();
  if (["critical", "page", "error", "emergency", "fatal"].includes(s)) return "critical";
  if (["info", "informational", "none", "low"].includes(s)) return "info";
  return "warning";
}

/** Whether an alert asks for the node to be quarantined: its own label, or its name on the operator's list. */
export function wantsQuarantine(labels: Record<string, string>, remediateAlerts: readonly string[]): boolean {
  const action = labels.gpuforge_action?.toLowerCase();
  if (action === "quarantine") return true;
  if (action === "none" || action === "notify") return false;
  return Boolean(labels.alertname && remediateAlerts.includes(labels.alertname));
}
