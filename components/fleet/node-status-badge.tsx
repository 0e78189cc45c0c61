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
};

export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={tones[status] ?? "neutral"}>{status}</Badge>;
}
