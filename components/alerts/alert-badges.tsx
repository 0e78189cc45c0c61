import { Badge, type Tone } from "@/components/ui/badge";
import type { AlertEventType } from "@/lib/alerts/rule-types";

const severityTones: Record<string, Tone> = { critical: "red", warning: "amber", info: "sky" };
const deliveryTones: Record<string, Tone> = { sent: "green", pending: "amber", failed: "red" };

export function SeverityBadge({ severity }: { severity: string }) {
  return <Badge tone={severityTones[severity] ?? "neutral"}>{severity}</Badge>;
}

export function AlertStatusBadge({ status }: { status: string }) {
  return <Badge tone={status === "firing" ? "red" : "green"}>{status}</Badge>;
}

/** A console notification was never sent anywhere: it is recorded for the operator plane. */
export function DeliveryBadge({ status, channel }: { status: string; channel?: string }) {
  if (channel === "console") return <Badge tone="neutral">recorded</Badge>;
  return <Badge tone={deliveryTones[status] ?? "neutral"}>{status}</Badge>;
}

/** How an alert type reads in the planes (every type: a new one fails the build until it has a label). */
export const ALERT_TYPE_LABELS: Record<AlertEventType, string> = {
  idle_gpu: "Idle capacity",
  idle_allocation: "Allocated but idle",
  gpu_temperature: "GPU overheating",
  node_unreachable: "Node unreachable",
  gpu_xid: "Fatal XID",
  sla_breach: "SLA breach",
  remediation_capped: "Remediation capped",
  job_moved: "Job moved",
  pod_interrupted: "Pod interrupted",
  unexpected_payment: "Unexpected payment",
  reservation_degraded: "Reservation degraded",
  provisioning_failed: "Provisioning failed",
  node_address_changed: "Node address changed",
  external: "External (Alertmanager)",
  burst_spend_cap: "Burst spend cap",
  provider_stray_instance: "Stray provider instance",
  burst_failed: "Burst failed",
  handover_failed: "Handover failed",
  attestation_key_mismatch: "Attestation key changed",
};

export function alertTypeLabel(type: string): string {
  return (ALERT_TYPE_LABELS as Record<string, string>)[type] ?? type;
}
