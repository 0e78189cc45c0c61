import "server-only";
import { timingSafeEqual } from "node:crypto";
import type { WorkloadPrincipal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { placementMac } from "@/lib/endpoints/replica-token";
import { forbidden, unauthorized } from "@/lib/errors";

// The credential a job's container gets instead of the agent key (as serving containers get
// theirs): it names one placement, job and attempt, and is a MAC over it with its fence. It lets the
// workload post its own outputs and nothing else, and it dies with the placement: once the attempt
// ends, or the job is placed again, it is refused. Nothing is stored.

const PREFIX = "gfj_";
const FORMAT = /^gfj_([0-9a-f]{32})_([1-9][0-9]{0,6})_([A-Za-z0-9_-]{43})$/;

export function jobReportToken(jobId: string, attempt: number, fence: string): string {
  return `${PREFIX}${jobId.replaceAll("-", "")}_${attempt}_${placementMac(`job:${jobId}:${attempt}:${fence}`).toString("base64url")}`;
}

export function looksLikeJobToken(token: string): boolean {
  return token.startsWith(PREFIX);
}

/** Resolves a job container's token to its placement, while that placement runs. */
export async function authenticateJobToken(token: string): Promise<WorkloadPrincipal> {
  const m = FORMAT.exec(token);
  if (!m) throw unauthorized("Invalid job token");
  const h = m[1]!;
  const jobId = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  const attempt = Number(m[2]);
  const { rows } = await pool().query<{ fence: string; open: boolean; tenant_id: string; tenant_status: string }>({
    name: "authenticate_job_token",
    text: `SELECT jp.fence::text AS fence, (jp.ended_at IS NULL) AS open, j.tenant_id, t.status AS tenant_status
             FROM job_placements jp JOIN jobs j ON j.id = jp.job_id JOIN tenants t ON t.id = j.tenant_id
            WHERE jp.job_id = $1 AND jp.attempt = $2`,
    values: [jobId, attempt],
  });
  const r = rows[0];
  const given = Buffer.from(m[3]!, "base64url");
  const expected = r ? placementMac(`job:${jobId}:${attempt}:${r.fence}`) : Buffer.alloc(0);
  if (!r || !r.open || given.length !== expected.length || !timingSafeEqual(given, expected))
    throw unauthorized("Invalid or expired job token");
  if (r.tenant_status !== "active") throw forbidden("Tenant is suspended");
  return {
    kind: "workload",
    placement: "job",
    jobId,
    attempt,
    fence: r.fence,
    tenantId: r.tenant_id,
    label: `job ${jobId.slice(0, 8)} attempt ${attempt}`,
  };
}
