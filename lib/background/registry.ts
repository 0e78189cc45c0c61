import "server-only";
import { evaluateAlerts } from "@/lib/alerts/evaluate-alerts";
import { deliverNotifications } from "@/lib/alerts/notification-outbox";
import { invoiceLastMonth } from "@/lib/billing/invoice-last-month";
import { accrueRunningUsage, enforcePrepaidBalances } from "@/lib/billing/meter";
import { pruneAuditLog } from "@/lib/audit/prune-audit-log";
import { env } from "@/lib/env";
import { reconcileEndpoints } from "@/lib/endpoints/reconcile-endpoints";
import { reconcilePods } from "@/lib/pods/reconcile-pods";
import { markOfflineNodes } from "@/lib/fleet/mark-offline-nodes";
import { foldGpuRollups } from "@/lib/metrics/fold-rollups";
import { pruneMetrics } from "@/lib/metrics/prune-metrics";
import { rollupClusterMetrics } from "@/lib/metrics/rollup-clusters";
import { advanceRunningPipelines } from "@/lib/pipelines/advance-pipeline";
import { enforcePipelineDeadlines } from "@/lib/pipelines/enforce-deadlines";
import { runDueToolCalls } from "@/lib/pipelines/tool-calls/run-tool-calls";
import { maintainReservations } from "@/lib/reservations/maintain-reservations";
import { advanceHandovers } from "@/lib/handover/run-handovers";
import { pruneAttestationNonces } from "@/lib/attestation/prune-nonces";
import { runSchedulerCycle } from "@/lib/scheduler/run-cycle";
import { reconcileInstances } from "@/lib/burst/reconcile-instances";
import { runBurstCycle } from "@/lib/burst/run-burst";
import { refreshAllOffers } from "@/lib/providers/refresh-offers";
import { pruneWorkloadLogs } from "@/lib/workload-logs/prune-workload-logs";
import { advanceProvisionings } from "@/lib/provisioning/advance-provisionings";
import { enforceSuspensions } from "@/lib/tenants/enforce-suspensions";
import { pruneSignInThrottles } from "@/lib/users/verify-credentials";
import { pruneSignInHistory } from "@/lib/accounts/sign-in-history";
import { warnLowBalances } from "@/lib/billing/low-balance";
import { expireSignups } from "@/lib/signup/discard-signup";
import { defineJob, type BackgroundJob } from "./types";

// Every background job of the platform. Issues add theirs here; inngest/functions and the
// in-process driver both read this list, so the two never disagree about what runs.
export const backgroundJobs: BackgroundJob[] = [
  defineJob({
    id: "audit-log-retention",
    description: "Delete audit entries older than AUDIT_RETENTION_DAYS",
    cron: "17 3 * * *",
    events: ["platform/audit.prune.requested"],
    run: () => pruneAuditLog(env().AUDIT_RETENTION_DAYS),
  }),
  defineJob({
    // Woken by submits, finished jobs and freed GPUs (debounced); the sweep catches the rest,
    // including retries whose backoff ended. Every run reads only the work it could place now (GPU
    // types with a free GPU); the work of the others is the next job's.
    id: "scheduler-cycle",
    description: "Place waiting jobs on free GPUs",
    cron: "* * * * *",
    everySeconds: 5,
    events: ["scheduler/run.requested"],
    // short: under load the events that arrive during a cycle wait for it and share the next one anyway
    debounceMs: 5,
    run: async ({ event, rerun }) => ({
      ...(await runSchedulerCycle(event ? `event: ${event.data.reason}` : rerun ? "event: rerun" : "sweep", { scope: "placeable" })),
    }),
  }),
  defineJob({
    // Beside the cycles that place, never in their way: a backlog of 10,000 jobs for full H100 nodes
    // read in the placing sweep held every submit for a free L4 GPU behind it for 0.7 s, and under a
    // steady stream of events that sweep never ran (each tick became a rerun of the event's cycle).
    // Every 30 s, as Slurm's backfill pass goes over its whole queue (bf_interval's default): such
    // work cannot start until a GPU of its type frees, and freeing one wakes a placing cycle at once.
    id: "scheduler-waiting",
    description: "Keep the reasons and quota states of work that no free GPU can take current",
    cron: "* * * * *",
    everySeconds: 30,
    run: async () => ({ ...(await runSchedulerCycle("sweep: waiting work", { scope: "waiting" })) }),
  }),
  defineJob({
    // Replaces replicas whose node or GPU left service, marks silent ones unhealthy, autoscales
    // and places missing replicas; woken when a node leaves service so replicas move in seconds.
    id: "endpoints-reconcile",
    description: "Keep inference endpoints at their desired healthy replicas; autoscale; move statuses",
    cron: "* * * * *",
    everySeconds: 5,
    events: ["endpoints/reconcile.requested"],
    debounceMs: 25,
    run: async () => ({ ...(await reconcileEndpoints()) }),
  }),
  defineJob({
    // Pods on nodes that left service (the node transitions handle most at once), containers that
    // never came up, stops no node confirmed.
    id: "pods-reconcile",
    description: "Interrupt pods whose node left service; fail pods that never started; finish unconfirmed stops",
    cron: "* * * * *",
    everySeconds: 10,
    events: ["pods/reconcile.requested"],
    debounceMs: 25,
    run: async () => ({ ...(await reconcilePods()) }),
  }),
  defineJob({
    // Starts and ends reservations on time (moving work on and off their nodes, billing each node's
    // last segment) and swaps free nodes in for reserved ones that left service; woken with the
    // endpoints' reconciler whenever a node leaves service.
    id: "reservations-maintain",
    description: "Start and end reservations on time; replace reserved nodes that left service",
    cron: "* * * * *",
    everySeconds: 5,
    events: ["endpoints/reconcile.requested"],
    debounceMs: 25,
    run: async () => ({ ...(await maintainReservations()) }),
  }),
  defineJob({
    id: "pipelines-sweep",
    description: "Advance running pipelines whose steps' jobs ended; fail those past their deadline",
    cron: "* * * * *",
    everySeconds: 10,
    run: async () => ({ ...(await enforcePipelineDeadlines()), ...(await advanceRunningPipelines()) }),
  }),
  defineJob({
    // Pipelines' http and inference steps, without GPUs: woken when a call is queued; the sweep
    // picks up retries whose backoff ended and calls whose worker died (their lease lapsed).
    id: "pipelines-tool-calls",
    description: "Make pipelines' tool calls (http, inference) with timeouts and retries; store responses as outputs",
    cron: "* * * * *",
    everySeconds: 2,
    events: ["pipelines/tool-call.requested"],
    debounceMs: 10,
    durable: true,
    run: async ({ step }) => ({ ...(await runDueToolCalls({ step })) }),
  }),
  defineJob({
    id: "fleet-offline-sweep",
    description: "Mark nodes offline after NODE_OFFLINE_AFTER_S without a heartbeat",
    cron: "* * * * *",
    everySeconds: 10,
    run: () => markOfflineNodes(env().NODE_OFFLINE_AFTER_S),
  }),
  defineJob({
    // Woken by metric reports (throttled) and at once by fatal XIDs, so a failing GPU's node is
    // quarantined within seconds; the sweep resolves what cleared in between.
    id: "alerts-evaluate",
    description: "Evaluate alert rules, fire and resolve events, remediate hardware faults within the cap",
    cron: "* * * * *",
    everySeconds: 15,
    events: ["alerts/evaluate.requested"],
    debounceMs: 50,
    run: async () => ({ ...(await evaluateAlerts()) }),
  }),
  defineJob({
    id: "notifications-deliver",
    description: "Deliver queued alert notifications (email, webhook) with retries and backoff",
    cron: "* * * * *",
    everySeconds: 10,
    events: ["alerts/notifications.queued"],
    debounceMs: 20,
    run: async () => ({ ...(await deliverNotifications()) }),
  }),
  defineJob({
    // Prepaid tenants' running work is charged at least every minute (segments of 45 s or more);
    // invoiced tenants' every hour, so month-end invoices include work still running.
    id: "billing-meter",
    description: "Bill running work, charge prepaid balances, block or stop work at zero balance",
    cron: "* * * * *",
    everySeconds: 15,
    run: async () => ({ ...(await accrueRunningUsage()), ...(await enforcePrepaidBalances()) }),
  }),
  defineJob({
    // Suspending a tenant stops its work in the same transaction; this catches whatever did not
    // pass through that path (a status changed by hand in the database).
    id: "tenants-suspension-sweep",
    description: "Stop any remaining work of suspended tenants (cancel running jobs, block waiting ones, stop replicas)",
    cron: "* * * * *",
    everySeconds: 15,
    events: ["platform/tenant.suspended"],
    run: async () => ({ ...(await enforceSuspensions()) }),
  }),
  defineJob({
    // Self-service: unverified sign-ups past SIGNUP_VERIFY_HOURS are removed (their address may sign up again)
    id: "signup-expiry",
    description: "Remove self-service sign-ups whose address was not verified in time",
    cron: "*/5 * * * *",
    run: async () => ({ ...(await expireSignups()) }),
  }),
  defineJob({
    id: "low-balance-warnings",
    description: "Mail prepaid tenants whose balance runs low or out, once per episode",
    cron: "* * * * *",
    run: async () => ({ ...(await warnLowBalances()) }),
  }),
  defineJob({
    id: "sign-in-history-retention",
    description: "Forget sign-in history older than 90 days",
    cron: "41 3 * * *",
    run: () => pruneSignInHistory(),
  }),
  defineJob({
    id: "sign-in-throttle-retention",
    description: "Forget sign-in failure counters quiet for a day",
    cron: "23 * * * *",
    run: () => pruneSignInThrottles(),
  }),
  defineJob({
    id: "billing-monthly-invoices",
    description: "Invoice last month's usage of every active invoiced tenant (idempotent per tenant and period)",
    cron: "5 0 1 * *",
    events: ["billing/invoices.requested"],
    run: async () => ({ ...(await invoiceLastMonth()) }),
  }),
  defineJob({
    // The ingest statement queues stored samples; this adds them into the per-minute rollups
    // (exactly once) and wakes the alert evaluator, so rollups trail ingestion by seconds.
    id: "metrics-rollup-fold",
    description: "Add newly stored GPU samples into the per-minute rollups",
    cron: "* * * * *",
    everySeconds: 5,
    events: ["metrics/rollups.fold.requested"],
    debounceMs: 100,
    run: async () => ({ ...(await foldGpuRollups()) }),
  }),
  defineJob({
    id: "metrics-cluster-rollup",
    description: "Fold per-GPU minute rollups into per-cluster rollups",
    cron: "* * * * *",
    everySeconds: 20,
    run: () => rollupClusterMetrics(10),
  }),
  defineJob({
    id: "metrics-retention",
    description: "Prune raw samples and rollups past their retention",
    cron: "7 * * * *",
    run: () => pruneMetrics({ rawHours: env().METRICS_RAW_RETENTION_HOURS, rollupDays: env().METRICS_ROLLUP_RETENTION_DAYS }),
  }),
  defineJob({
    // Issue 30: every enabled provider's offers, cached with their age (a failed refresh keeps the old ones)
    id: "provider-offers-refresh",
    description: "Refresh GPU providers' offers (RunPod, Lambda, Vast.ai) into the cache",
    // (everySeconds is a step of seconds within a minute: slower sweeps use the cron alone)
    cron: "*/5 * * * *",
    events: ["providers/offers.refresh.requested"],
    debounceMs: 100,
    run: async () => ({ ...(await refreshAllOffers()) }),
  }),
  defineJob({
    // Burst beside the scheduler: rent for jobs waiting beyond BURST_WAIT_S, bring joined instances
    // in, fail over, release and terminate idle ones
    id: "burst-cycle",
    description: "Burst waiting jobs to provider capacity; fail over; terminate idle provider instances",
    cron: "* * * * *",
    everySeconds: 10,
    events: ["burst/run.requested"],
    debounceMs: 50,
    run: async () => ({ ...(await runBurstCycle()) }),
  }),
  defineJob({
    // Nothing rented runs unowned: what each provider reports against what we believe
    id: "burst-reconcile",
    description: "Compare provider instances with ours; terminate strays with an alert",
    cron: "*/3 * * * *",
    run: async () => ({ ...(await reconcileInstances()) }),
  }),
  defineJob({
    // Each running handover (release, wipe, attestation) moves on under its node's lease; woken by
    // the agent's wipe reports and evidence, and by handovers starting; the sweep applies timeouts.
    id: "fleet-handovers",
    description: "Move node handovers on: release, wipe, attest; quarantine and alert on failure",
    cron: "* * * * *",
    everySeconds: 2,
    events: ["fleet/handover.requested"],
    debounceMs: 20,
    durable: true,
    run: async ({ step }) => ({ ...(await advanceHandovers({ step })) }),
  }),
  defineJob({
    id: "attestation-nonce-retention",
    description: "Delete attestation nonces that expired more than a day ago",
    cron: "41 * * * *",
    run: () => pruneAttestationNonces(),
  }),
  defineJob({
    id: "workload-logs-retention",
    description: "Delete workload log chunks older than WORKLOAD_LOG_RETENTION_DAYS",
    cron: "23 * * * *",
    run: () => pruneWorkloadLogs(env().WORKLOAD_LOG_RETENTION_DAYS),
  }),
  defineJob({
    // Woken when a provisioning starts; the sweep visits every running one whose step is due (a
    // reset settling, an image mounting, the agent not back yet). Each visit holds the node's lease,
    // so instances and Inngest runs never work one node at once; a stalled worker's lease runs out
    // and the next sweep continues. With Inngest each visit is a durable step.
    id: "provisioning-advance",
    description: "Provision nodes through their BMCs (Redfish), step by step under each node's lease",
    cron: "* * * * *",
    everySeconds: 2,
    events: ["provisioning/advance.requested"],
    debounceMs: 25,
    durable: true,
    run: async ({ step }) => ({ ...(await advanceProvisionings(step ? { step } : {})) }),
  }),
];
