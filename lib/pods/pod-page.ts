import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { displayActor, resolveActors } from "@/lib/audit/actor-names";
import { db } from "@/lib/db/client";
import { rateFor } from "@/lib/billing/money";
import { listRates } from "@/lib/billing/rates";
import { nullIfRefused } from "@/lib/errors";
import { isUuid } from "@/lib/ids";
import { podGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";
import { oneOf } from "@/lib/vocabulary";
import { POD_STATUSES, podActions } from "./pod-lifecycle";
import { getPodOrThrow, listPodEvents, listPodPlacements } from "./queries";

/** Everything a pod's page shows (tenant or operator plane), or null when the caller may not see it. */
export async function podPageData(p: Principal, id: string) {
  if (!isUuid(id)) return null;
  const pod = await nullIfRefused(getPodOrThrow(p, id));
  if (!pod) return null;
  const [events, placements, telemetry, tenant, rates] = await Promise.all([
    listPodEvents(p, id),
    listPodPlacements(p, id),
    podGpuTelemetry(p, id, {}),
    db().tenant.findUniqueOrThrow({ where: { id: pod.tenant_id }, select: { id: true, name: true } }),
    listRates(),
  ]);
  const actors = await resolveActors({ labels: events.map((e) => e.actor) });
  return {
    pod,
    tenant,
    /** what an hour of it costs at today's rate, while it runs */
    ratePerHourCents: rateFor(Object.fromEntries(rates.map((r) => [r.gpu_type, r.cents_per_hour])), pod.gpu_type),
    actions: podActions(oneOf(POD_STATUSES, pod.status, "pods.status")),
    events: events.map((e) => ({ ...e, actor: displayActor(actors.byLabel, e.actor) })),
    placements: placements.map((pl) => ({
      attempt: pl.attempt,
      hostname: pl.hostname,
      gpus: pl.gpu_ids.length,
      started_at: pl.started_at.toISOString(),
      running_at: pl.running_at?.toISOString() ?? null,
      ended_at: pl.ended_at?.toISOString() ?? null,
      end_status: pl.end_status,
    })),
    telemetry: {
      from: telemetry.from,
      to: telemetry.to,
      series: telemetry.series.map((s) => ({
        label: `GPU ${s.gpu_index ?? "?"} on ${s.hostname ?? "?"} · run ${s.attempt}`,
        points: s.points,
      })),
    },
  };
}
