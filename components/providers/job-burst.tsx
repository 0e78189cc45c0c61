import { Badge } from "@/components/ui/badge";
import { Card, CardHeader } from "@/components/ui/card";
import { formatDateTime } from "@/components/ui/format";
import { formatCents } from "@/lib/billing/money";
import type { z } from "zod";
import type { jobBurstJsonSchema } from "@/lib/providers/schemas";
import { PROVIDER_LABELS } from "@/lib/providers/vocabulary";

type JobBurst = z.infer<typeof jobBurstJsonSchema>;

const outcomeTone: Record<string, "green" | "amber" | "red" | "sky" | "neutral"> = {
  launched: "sky",
  reused: "sky",
  registered: "green",
  capacity: "amber",
  provider_error: "red",
  rate_limited: "amber",
  never_registered: "red",
  interrupted: "red",
  cap_reached: "amber",
  no_offer: "neutral",
};

/** Why and where a job burst to provider capacity, every attempt in order, and what it costs. Nothing when it never tried. */
export function JobBurstCard({ burst }: { burst: JobBurst }) {
  if (burst.attempts.length === 0 && burst.quote && burst.estimate) {
    const q = burst.quote;
    return (
      <Card className="mb-6">
        <CardHeader
          title="Provider capacity"
          description={`If the fleet has no room for it${q.after_s > 0 ? ` within ${q.after_s} s` : ""}, this job bursts to rented capacity: now that is ${PROVIDER_LABELS[q.provider]} (${q.region}) at ${formatCents(q.price_cents_per_gpu_hour)} per GPU-hour${burst.estimate.estimated_total_cents === null ? "" : `, about ${formatCents(burst.estimate.estimated_total_cents)} for its declared duration`}.`}
        />
      </Card>
    );
  }
  if (burst.attempts.length === 0) return null;
  const i = burst.instance;
  return (
    <Card className="mb-6">
      <CardHeader
        title="Provider capacity"
        description={
          i
            ? `This job waited for the fleet and was placed on rented capacity: ${PROVIDER_LABELS[i.provider]} (${i.region}), ${i.gpu_count} GPU${i.gpu_count === 1 ? "" : "s"} at ${formatCents(i.price_cents_per_gpu_hour)} per GPU-hour.`
            : "This job waited for the fleet; burst to provider capacity was tried."
        }
      />
      {burst.estimate ? (
        <dl className="grid grid-cols-2 gap-4 border-b border-slate-100 px-5 pb-4 sm:grid-cols-3">
          <div>
            <dt className="text-xs text-slate-500">Price</dt>
            <dd className="text-sm font-medium tabular-nums">{formatCents(burst.estimate.price_cents_per_gpu_hour)} / GPU-hour</dd>
          </div>
          <div>
            <dt className="text-xs text-slate-500">Estimated total</dt>
            <dd className="text-sm font-medium tabular-nums">
              {burst.estimate.estimated_total_cents === null ? "no declared duration" : formatCents(burst.estimate.estimated_total_cents)}
            </dd>
          </div>
          <div>
            <dt className="text-xs text-slate-500">So far</dt>
            <dd className="text-sm font-medium tabular-nums">{formatCents(burst.estimate.cost_so_far_cents)}</dd>
          </div>
        </dl>
      ) : null}
      <ol className="divide-y divide-slate-100" aria-label="Burst attempts">
        {burst.attempts.map((a, n) => (
          <li key={n} className="flex flex-wrap items-start gap-3 px-5 py-3 text-sm">
            <Badge tone={outcomeTone[a.outcome] ?? "neutral"}>{a.outcome.replace("_", " ")}</Badge>
            <span className="min-w-0 flex-1 text-slate-700">{a.message}</span>
            <time className="text-xs text-slate-500" dateTime={a.at}>
              {formatDateTime(a.at)}
            </time>
          </li>
        ))}
      </ol>
    </Card>
  );
}
