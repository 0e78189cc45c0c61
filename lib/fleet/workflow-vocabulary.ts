// The closed lists of node workflows (lib/fleet/node-workflows.ts), in a module without I/O so the
// vocabulary registry and pages can import them.

export const WORKFLOW_KINDS = ["handover", "provisioning"] as const;
export type WorkflowKind = (typeof WORKFLOW_KINDS)[number];
export const WORKFLOW_STATUSES = ["running", "succeeded", "failed", "cancelled"] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export const WORKFLOW_TRIGGERS = ["tenancy_ended", "operator"] as const;
export type WorkflowTrigger = (typeof WORKFLOW_TRIGGERS)[number];
export const STEP_STATUSES = ["running", "succeeded", "failed", "skipped"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
