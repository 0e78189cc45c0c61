// The job state machine, pure. Services ask it whether an event is allowed and what follows;
// every transition they apply is written to job_events with who and why.
//
//   queued ⇄ blocked(quota | billing)      queued | blocked ──schedule──▶ running
//   running ──exit 0──▶ completed          running ──fail──▶ queued (retries left, after backoff) | failed
//   running ──node lost──▶ queued (the tenant's retries are not spent)
//   queued | blocked | running ──cancel──▶ cancelled          completed, failed, cancelled are final

export const JOB_STATUSES = ["queued", "blocked", "running", "completed", "failed", "cancelled"] as const;
/** Why a blocked job waits: over its tenant's quota, its prepaid balance ran out, or its tenant is suspended. */
export const BLOCK_REASONS = ["quota", "billing", "suspended"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];

export type JobEvent =
  | { kind: "schedule" }
  | { kind: "block"; reason: "quota" | "billing" }
  | { kind: "unblock" }
  | { kind: "complete" }
  | { kind: "fail"; retryable?: boolean }
  | { kind: "cancel" }
  | { kind: "node_lost" };

export interface JobFacts {
  status: JobStatus;
  failures: number;
  maxRetries: number;
}

export type JobTransition = { ok: true; to: JobStatus; failures: number; retry: boolean } | { ok: false; reason: string };

const refuse = (facts: JobFacts, what: string): JobTransition => ({ ok: false, reason: `A ${facts.status} job cannot ${what}` });

export function jobTransition(facts: JobFacts, event: JobEvent): JobTransition {
  const { status } = facts;
  const same = { failures: facts.failures, retry: false };
  switch (event.kind) {
    case "schedule":
      return status === "queued" || status === "blocked" ? { ok: true, to: "running", ...same } : refuse(facts, "be scheduled");
    case "block":
      return status === "queued" || status === "blocked" ? { ok: true, to: "blocked", ...same } : refuse(facts, "be blocked");
    case "unblock":
      return status === "blocked" ? { ok: true, to: "queued", ...same } : refuse(facts, "be unblocked");
    case "complete":
      return status === "running" ? { ok: true, to: "completed", ...same } : refuse(facts, "complete");
    case "fail": {
      if (status !== "running") return refuse(facts, "fail");
      const failures = facts.failures + 1;
      return failures <= facts.maxRetries && event.retryable !== false
        ? { ok: true, to: "queued", failures, retry: true }
        : { ok: true, to: "failed", failures, retry: false };
    }
    case "cancel":
      return FINAL_STATUSES.includes(status) ? refuse(facts, "be cancelled") : { ok: true, to: "cancelled", ...same };
    case "node_lost":
      return status === "running" ? { ok: true, to: "queued", ...same } : refuse(facts, "lose its node");
  }
}

export interface BackoffPolicy {
  backoff_s: number;
  backoff_factor: number;
  max_backoff_s: number;
}
const DEFAULT_BACKOFF: BackoffPolicy = { backoff_s: 10, backoff_factor: 2, max_backoff_s: 600 };

/** Backoff before retry n (1-based): 10 s, 20 s, 40 s … capped at 10 minutes. */
export function retryBackoffSeconds(failures: number): number {
  return backoffSeconds(failures, DEFAULT_BACKOFF);
}

/** Backoff before retry n (1-based) under a step's policy: backoff_s × factor^(n−1), capped. */
export function backoffSeconds(failures: number, policy: BackoffPolicy): number {
  return Math.round(Math.min(policy.max_backoff_s, policy.backoff_s * policy.backoff_factor ** Math.max(0, failures - 1)));
}

/** Whether an exit code is one a job's policy retries (any failure, when it names none). */
export function exitCodeRetries(exitCode: number | undefined, onExitCodes: readonly number[] | null | undefined): boolean {
  if (!onExitCodes?.length) return true;
  return exitCode !== undefined && onExitCodes.includes(exitCode);
}
