import "server-only";
import { emitEvent } from "@/lib/background/emit";
import { pool } from "@/lib/db/client";
import { run, runCount } from "@/lib/db/statement";
import { inTransaction } from "@/lib/db/transaction";
import { env } from "@/lib/env";
import { stopRunningJobs } from "@/lib/jobs/stop-running-jobs";
import { stopTenantPods } from "@/lib/pods/stop-tenant-pods";
import {
  ACCRUE_JOBS,
  ACCRUE_PODS,
  ACCRUE_REPLICAS,
  ACCRUE_RESERVED_NODES,
  BLOCK_JOBS_FOR_BILLING,
  MARK_EXHAUSTED_TENANTS,
  UNBLOCK_FUNDED_JOBS,
} from "./statements";

/**
 * Bills the elapsed part of running jobs, live endpoint replicas, running pods and reserved nodes: prepaid tenants' every `prepaidEveryS` (their balance
 * is charged in the same statement), invoiced tenants' every `invoiceEveryS`, so a month-end
 * invoice holds work that is still running. Each segment starts where the run's last one ended
 * (the database refuses overlaps); jobs another transaction holds are skipped until the next run.
 */
export async function accrueRunningUsage(opts: { prepaidEveryS?: number; invoiceEveryS?: number; tenantId?: string; until?: Date } = {}) {
  const args = [opts.prepaidEveryS ?? 45, opts.invoiceEveryS ?? 3600, opts.tenantId ?? null, opts.until?.toISOString() ?? null] as const;
  let segments = 0;
  for (const accrual of [ACCRUE_JOBS, ACCRUE_REPLICAS, ACCRUE_PODS, ACCRUE_RESERVED_NODES])
    segments += (await run(pool(), accrual, [...args]))[0]!.billed;
  return { segments };
}

/**
 * Prepaid tenants at or below zero: their waiting jobs are blocked for billing at once (and their
 * pending pods are not placed), and their running jobs and pods stop once the grace period the operator configured (PREPAID_GRACE_S) has passed.
 * Jobs blocked for billing of any tenant that is not at zero (funds arrived, or it left prepaid)
 * are queued again.
 */
export async function enforcePrepaidBalances(graceS = env().PREPAID_GRACE_S) {
  const out = await inTransaction(async (c) => {
    const tenants = await run(c, MARK_EXHAUSTED_TENANTS, [graceS]);
    const exhausted = tenants.filter((t) => t.exhausted).map((t) => t.id);
    const overGrace = tenants.filter((t) => t.over_grace).map((t) => t.id);

    const blocked = await runCount(c, BLOCK_JOBS_FOR_BILLING, [exhausted]);
    const stopped = await stopRunningJobs(c, overGrace, {
      error: "Stopped: the prepaid balance stayed at zero past the grace period",
      reason: "prepaid balance at zero past the grace period",
      actor: "billing",
    });
    const podsStopped = await stopTenantPods(c, overGrace, {
      reason: "Stopped: the prepaid balance stayed at zero past the grace period; add funds and start it again",
      actor: "billing",
    });
    const unblocked = await runCount(c, UNBLOCK_FUNDED_JOBS, [exhausted]);
    return {
      exhausted: exhausted.length,
      jobs_blocked: blocked,
      jobs_stopped: stopped.length,
      jobs_unblocked: unblocked,
      pods_stopped: podsStopped.length,
    };
  });
  if (out.jobs_unblocked > 0 || out.jobs_stopped || out.pods_stopped)
    await emitEvent("scheduler/run.requested", { reason: "billing state changed" });
  return out;
}
