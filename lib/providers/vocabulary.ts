// The closed lists of the provider and burst tables (checked against their CHECK constraints by
// tests/integration/vocabulary-drift.test.ts through lib/db/closed-columns.ts). Pure.

/** The providers GPUForge rents from, by the name configuration and the API use. */
export const PROVIDERS = ["runpod", "lambda", "vast"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const PROVIDER_LABELS: Record<ProviderName, string> = { runpod: "RunPod", lambda: "Lambda", vast: "Vast.ai" };

/**
 * An instance's life as we see it: launching (we asked, no id yet), booting (the provider has it,
 * our agent has not registered), running (a node of its provider cluster), terminating (we asked
 * the provider to end it), terminated, failed (never launched).
 */
export const INSTANCE_STATUSES = ["launching", "booting", "running", "terminating", "terminated", "failed"] as const;

/** How one try to place a job on provider capacity ended (burst_attempts.outcome). */
export const ATTEMPT_OUTCOMES = [
  "launched",
  "reused",
  "registered",
  "capacity",
  "provider_error",
  "rate_limited",
  "never_registered",
  "interrupted",
  "cap_reached",
  "no_offer",
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
