import { firingAlertCounts } from "@/lib/alerts/queries";
import { fleet } from "@/lib/api/contracts";
import { billingSummary } from "@/lib/billing/usage";
import { fleetSummary } from "@/lib/fleet/queries";
import { jobCounts } from "@/lib/jobs/queries";
import { route } from "@/lib/http/route";

export const GET = route(fleet.dashboard, async ({ principal, reply }) => {
  const [s, jobs, alerts, billing] = await Promise.all([fleetSummary(), jobCounts(), firingAlertCounts(principal), billingSummary()]);
  return reply(200, {
    gpus_total: s.gpus_total,
    gpus_allocated: s.gpus_allocated,
    gpus_idle: s.gpus_schedulable,
    gpus_unhealthy: s.gpus_unhealthy,
    utilization_avg_pct: s.utilization_avg_pct,
    nodes_online: s.nodes_online,
    nodes_offline: s.nodes_offline,
    nodes_quarantined: s.nodes_quarantined,
    jobs_queued: jobs.queued,
    jobs_running: jobs.running,
    jobs_blocked: jobs.blocked,
    alerts_firing: alerts.total,
    alerts_critical: alerts.critical,
    revenue_month_cents: billing.revenue_month_cents,
    revenue_month_billed_cents: billing.revenue_month_billed_cents,
    revenue_month_accruing_cents: billing.revenue_month_accruing_cents,
  });
});
