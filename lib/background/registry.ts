import "server-only";
import { pruneAuditLog } from "@/lib/audit/prune-audit-log";
import { env } from "@/lib/env";
import type { BackgroundJob } from "./types";

// Every background job of the platform. Issues add theirs here; inngest/functions and the
// in-process driver both read this list, so the two never disagree about what runs.
export const backgroundJobs: BackgroundJob[] = [
  {
    id: "audit-log-retention",
    description: "Delete audit entries older than AUDIT_RETENTION_DAYS",
    cron: "17 3 * * *",
    events: ["platform/audit.prune.requested"],
    run: () => pruneAuditLog(env().AUDIT_RETENTION_DAYS),
  },
];
