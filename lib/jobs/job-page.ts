import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { displayActor, resolveActors } from "@/lib/audit/actor-names";
import { jobCostSoFar } from "@/lib/billing/usage";
import { db } from "@/lib/db/client";
import { nullIfRefused } from "@/lib/errors";
import { isUuid } from "@/lib/ids";
import { mayCancelJob } from "./job-permissions";
import { aboutTenant } from "./operator-voice";
import { jobGpuTelemetry } from "@/lib/metrics/held-gpu-telemetry";
import { jobSlurmView } from "@/lib/slurm/queries";
import { getJobOrThrow, jobPlacement, jobSubmitter, listJobEvents, listJobPlacements } from "./queries";

/** Everything a job's page shows (tenant or operator plane), or null when the caller may not see it. */
export async function jobPageData(p: Principal, id: string) {
  if (!isUuid(id)) return null;
  const job = await nullIfRefused(getJobOrThrow(p, id));
  if (!job) return null;
  const [events, placement, cost, submitter, tenant, placements, telemetry, slurm] = await Promise.all([
    listJobEvents(p, id),
    jobPlacement(id),
    jobCostSoFar(id),
    jobSubmitter(job.submittedBy),
    db().tenant.findUniqueOrThrow({ where: { id: job.tenantId }, select: { id: true, name: true } }),
    listJobPlacements(p, id),
    jobGpuTelemetry(p, id, {}),
    jobSlurmView(p, id),
  ]);
  const actors = await resolveActors({ labels: events.map((e) => e.actor) });
  return {
    // an operator reads why it waits about the tenant, not as the tenant
    job: p.kind === "operator" ? { ...job, pendingReason: aboutTenant(job.pendingReason, tenant.name) } : job,
    events: events.map((e) => ({
      id: String(e.id),
      fromStatus: e.fromStatus,
      toStatus: e.toStatus,
      reason: e.reason,
      actor: displayActor(actors.byLabel, e.actor),
      createdAt: e.createdAt.toISOString(),
    })),
    placement,
    cost,
    submittedBy: submitter ? `${submitter.name} (${submitter.email})` : null,
    tenant,
    mayCancel: mayCancelJob(p, job),
    placements,
    telemetry,
    slurm,
  };
}
