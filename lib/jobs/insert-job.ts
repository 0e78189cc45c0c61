import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { auditRow } from "@/lib/audit/record-audit";
import { db, pool, type Tx } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { forbidden, isAppError, rateLimited, unsatisfiable, validationFailed, type AppError } from "@/lib/errors";
import { assertFitsReservation, burstPriceTerms } from "./assert-satisfiable";
import { jobSelect } from "./schemas";
import { INSERT_JOB } from "./statements";

export interface NewJob {
  name: string;
  gpu_count: number;
  gpu_type: string;
  priority: number;
  cluster_id?: string;
  max_retries: number;
  image?: string;
  command?: string;
  duration_s?: number;
  env?: Record<string, string>;
  /** retry policy beyond max_retries: backoff, and which exit codes retry (any, when absent) */
  retry?: { backoff_s: number; backoff_factor: number; max_backoff_s: number; on_exit_codes?: number[] };
  reservation_id?: string;
}

/**
 * Creates a job: queued, or blocked by quota. Refuses (422) a job that can never run, (400) a
 * priority better than the tenant may use, and (429) a submission past the tenant's cap on waiting
 * jobs (`capWaiting`: direct submissions; steps of an accepted pipeline are bounded by its size
 * instead). `field` prefixes the paths of field errors (e.g. `steps[2].`).
 *
 * One statement (lib/jobs/statements.ts) takes the tenant's row lock, reads what the checks need
 * and writes the job, its event and, with `audit`, the audit entry; refusals come from the facts
 * it returns, in the order the checks have always been made. Inside `tx` (a pipeline's steps) the
 * lock is held until that transaction ends; without one (a direct submit) the statement commits by
 * itself, so one tenant's submits hold the lock for one statement each.
 */
export async function insertJob(
  tx: Tx | undefined,
  tenantId: string,
  input: NewJob,
  actorLabel: string,
  opts: { pipelineId?: string; field?: string; capWaiting?: boolean; submittedBy?: string; audit?: Actor } = {},
) {
  const f = opts.field ?? "";
  // tenant code runs only in containers: a command needs an image, the operator's default at the least
  const image = input.image ?? (input.command ? env().DEFAULT_JOB_IMAGE : undefined);
  const imageProblem =
    input.command && !image
      ? validationFailed([
          {
            path: `${f}image`,
            message: "Required with a command: commands run only inside a container image, and no default image is configured",
          },
        ])
      : null;
  // read outside the lock: nothing of the tenant's changes what a reservation holds
  const reservationProblem = input.reservation_id
    ? await assertFitsReservation(tx ?? db(), tenantId, { ...input, reservation_id: input.reservation_id }, f).then(
        () => null,
        (e: unknown) => (isAppError(e) ? e : Promise.reject(e)),
      )
    : null;
  const cap = opts.capWaiting ? env().MAX_WAITING_JOBS_PER_TENANT : null;
  const audit = opts.audit
    ? auditRow(opts.audit, {
        action: "job.submitted",
        targetType: "job",
        tenantId,
        details: { name: input.name, gpu_count: input.gpu_count, gpu_type: input.gpu_type },
      })
    : null;
  const facts = (await runOne(tx ?? pool(), INSERT_JOB, [
    tenantId,
    input.name,
    input.gpu_count,
    input.gpu_type,
    input.priority,
    input.cluster_id ?? null,
    input.max_retries,
    image ?? null,
    input.command ?? null,
    input.duration_s ?? null,
    JSON.stringify(input.env ?? {}),
    input.retry?.backoff_s ?? null,
    input.retry?.backoff_factor ?? null,
    input.retry?.max_backoff_s ?? null,
    input.retry?.on_exit_codes ?? [],
    input.reservation_id ?? null,
    opts.pipelineId ?? null,
    opts.submittedBy ?? null,
    cap,
    !imageProblem && !reservationProblem,
    actorLabel,
    audit?.actorKind ?? null,
    audit?.actorId ?? null,
    JSON.stringify(audit?.details ?? {}),
    audit?.requestId ?? null,
    Boolean(image || input.command),
    ...burstTerms(),
  ]))!;

  const refusal = ((): AppError | null => {
    if (!facts.tenant_found) return validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    if (facts.status !== "active") return forbidden("Tenant is suspended");
    if (input.priority < facts.max_priority!) {
      return validationFailed([
        { path: `${f}priority`, message: `Your organisation's highest allowed priority is ${facts.max_priority} (1 is highest)` },
      ]);
    }
    if (imageProblem) return imageProblem;
    if (cap !== null && facts.waiting! >= cap) {
      return rateLimited(
        `Your organisation already has ${cap} jobs waiting, the most allowed at once; submit more as they start, or cancel some`,
      );
    }
    const issue = (message: string) => [{ path: `${f}gpu_count`, message }];
    if (input.gpu_count > facts.quota!) {
      return unsatisfiable(
        `The work needs ${input.gpu_count} GPUs but the tenant's whole quota is ${facts.quota}`,
        issue(`More than your organisation's quota of ${facts.quota} GPUs: it could never start. Ask your operator for a larger quota.`),
      );
    }
    if (!facts.cluster_found) return validationFailed([{ path: `${f}cluster_id`, message: "No such cluster" }]);
    if (input.gpu_count > facts.capacity && !facts.burst_can_hold) {
      const where = `${input.cluster_id ? " in that cluster" : ""}${image || input.command ? " on nodes that run containers" : ""}`;
      return unsatisfiable(
        `The fleet has ${facts.capacity} ${input.gpu_type} GPUs${where}; the work needs ${input.gpu_count}`,
        issue(`The fleet has ${facts.capacity} ${input.gpu_type} GPUs${where} in all: it could never start.`),
      );
    }
    return reservationProblem;
  })();
  if (refusal) throw refusal;
  if (!facts.job_id) throw new Error("insertJob: every check passed but no job was written");
  return (tx ?? db()).job.findUniqueOrThrow({ where: { id: facts.job_id }, select: jobSelect });
}

/** The submit statement's last parameters: providers with their markups, and those that run containers. */
function burstTerms(): [string[], number[], string[]] {
  const t = burstPriceTerms();
  return [t.providers, t.markups, t.containerProviders];
}
