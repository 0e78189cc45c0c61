import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { db, type Tx } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { conflict, forbidden, notFound, staleReport } from "@/lib/errors";
import { agentMayReportOn } from "@/lib/jobs/placement-access";
import { accountNameFor, disambiguatedAccountName } from "./account-name";
import { jobPhase, normaliseJobState } from "./job-state";
import { slurmAttempt } from "./queries";
import type { ReportSlurmJobInput } from "./schemas";
import {
  CLAIM_ACCOUNT,
  INSERT_SLURM_JOB_EVENT,
  LOCK_JOB_FOR_SLURM,
  MOVE_RUN_START,
  PLACEMENT_NODES,
  TENANT_ACCOUNT,
  UPDATE_SLURM_JOB,
} from "./statements";

/** The tenant's Slurm account: chosen the first time one of its jobs goes to Slurm, then kept. */
async function accountOf(tx: Tx, tenantId: string): Promise<string> {
  const have = await runOne(tx, TENANT_ACCOUNT, [tenantId]);
  if (have) return have.account;
  const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId }, select: { name: true } });
  for (const name of [accountNameFor(tenant.name), disambiguatedAccountName(tenant.name, tenantId)]) {
    const claimed = await runOne(tx, CLAIM_ACCOUNT, [tenantId, name]);
    if (claimed) return claimed.account;
    // taken: by this tenant in a concurrent report, or by another tenant with a name like its own
    const now = await runOne(tx, TENANT_ACCOUNT, [tenantId]);
    if (now) return now.account;
  }
  throw conflict(`No Slurm account name is free for tenant ${tenantId}`);
}

const at = (iso: string | null | undefined) => (iso ? new Date(iso) : null);

/**
 * A Slurm bridge's report on a placement's Slurm job, fenced like every agent report: it names the
 * placement (attempt and fence) and one that is not the job's current running placement is stale
 * (409 stale_report) and changes nothing. It records the Slurm job's id, state and reason (each
 * change in the job's Slurm history), and its start and end as Slurm gives them: the run is billed
 * from Slurm's StartTime, and its final usage ends at Slurm's EndTime. The answer says what the
 * placement is (its nodes and GPUs, its tenant's Slurm account), for the submission.
 */
export async function reportSlurmJob(actor: Actor, jobId: string, input: ReportSlurmJobInput) {
  const p = actor.principal;
  if (p.kind !== "agent" && p.kind !== "operator") throw forbidden("Only a Slurm cluster's bridge reports on Slurm jobs");
  if (p.kind === "agent" && p.nodeId)
    throw forbidden("A node-bound agent key speaks for its node only; a Slurm bridge uses its cluster's key");
  const state = normaliseJobState(input.state);
  return db()
    .$transaction(async (tx) => {
      if (p.kind === "agent" && !(await agentMayReportOn(tx, p, jobId))) throw notFound("Job");
      const job = await runOne(tx, LOCK_JOB_FOR_SLURM, [jobId, input.attempt]);
      if (!job) throw notFound("Job");
      if (job.status !== "running" || job.attempts !== input.attempt || job.fence !== input.fence) throw staleReport();
      if (!job.tracked)
        throw conflict("This placement is not on a Slurm cluster: its node agents report on it", [
          { path: "attempt", message: "Not a placement on a Slurm cluster" },
        ]);
      if (input.slurm_job_id && job.slurm_job_id && input.slurm_job_id !== job.slurm_job_id)
        throw conflict(
          `This placement's Slurm job is ${job.slurm_job_id}; a report about Slurm job ${input.slurm_job_id} changes nothing`,
          [{ path: "slurm_job_id", message: `The placement's Slurm job is ${job.slurm_job_id}` }],
        );
      const account = await accountOf(tx, job.tenant_id);
      const reason = input.reason?.trim() || null;
      await run(tx, UPDATE_SLURM_JOB, [
        jobId,
        input.attempt,
        state,
        reason,
        input.slurm_job_id ?? null,
        input.nodes?.trim() || null,
        input.partition ?? null,
        input.exit_code ?? null,
        account,
        at(input.submitted_at),
        jobPhase(state) === "running" || jobPhase(state) === "ended" ? at(input.started_at) : null,
        jobPhase(state) === "ended" ? at(input.ended_at) : null,
      ]);
      if (state !== job.state || reason !== job.reason || (input.slurm_job_id && !job.slurm_job_id))
        await run(tx, INSERT_SLURM_JOB_EVENT, [jobId, input.attempt, state, reason, input.slurm_job_id ?? job.slurm_job_id]);
      // the run starts when Slurm started it: nothing was billed before, and the start moves there
      if (input.started_at && (jobPhase(state) === "running" || jobPhase(state) === "ended"))
        await run(tx, MOVE_RUN_START, [jobId, input.attempt, new Date(input.started_at)]);
      const nodes = await run(tx, PLACEMENT_NODES, [jobId]);
      return {
        submission: {
          tenant_id: job.tenant_id,
          account,
          gpu_type: job.gpu_type,
          gpu_count: job.gpu_count,
          duration_s: job.duration_s,
          nodes: nodes.map((n) => ({ node_id: n.node_id, hostname: n.hostname, gpu_ids: n.gpu_ids })),
        },
      };
    })
    .then(async (r) => ({ slurm: (await slurmAttempt(jobId, input.attempt))!, ...r }));
}
