import { Badge, type Tone } from "@/components/ui/badge";

const tones: Record<string, Tone> = { confirmed: "sky", active: "green", completed: "neutral", released: "neutral", cancelled: "neutral" };

export function ReservationStatus({ status, degraded }: { status: string; degraded?: boolean }) {
  return (
    <span className="inline-flex gap-1.5">
      <Badge tone={tones[status] ?? "neutral"}>{status}</Badge>
      {degraded ? <Badge tone="amber">degraded</Badge> : null}
    </span>
  );
}
