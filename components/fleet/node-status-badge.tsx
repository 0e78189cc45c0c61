import { Badge, type Tone } from "@/components/ui/badge";

const tones: Record<string, Tone> = {
  available: "green",
  registered: "sky",
  draining: "amber",
  maintenance: "neutral",
  quarantined: "red",
  offline: "neutral",
  unhealthy: "red",
  missing: "neutral",
  // a node between tenants or being provisioned
  provisioning: "indigo",
  releasing: "teal",
  wiping: "teal",
  inspecting: "teal",
  attestation_failed: "fuchsia",
};

export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={tones[status] ?? "neutral"}>{status.replace("_", " ")}</Badge>;
}
