import type { z } from "zod";
import type { Prisma } from "@/lib/generated/prisma/client";
import { oneOf } from "@/lib/vocabulary";
import { REMEDIATION_OUTCOMES } from "./rule-types";
import type { remediationJsonSchema } from "./schemas";

/** A remediation as listed: its row and the hostname of its node (which may have been deleted since). */
type RemediationRow = Prisma.RemediationGetPayload<object> & { hostname: string };

export function remediationJson(r: RemediationRow): z.input<typeof remediationJsonSchema> {
  return {
    id: r.id,
    node_id: r.nodeId,
    hostname: r.hostname,
    alert_id: r.alertEventId,
    cause: r.cause,
    action: "quarantine" as const,
    outcome: oneOf(REMEDIATION_OUTCOMES, r.outcome, "remediations.outcome"),
    jobs_requeued: r.jobsRequeued,
    details: (r.details ?? {}) as Record<string, unknown>,
    created_at: r.createdAt.toISOString(),
  };
}
