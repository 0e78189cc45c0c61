import "server-only";
import type { AgentPrincipal, Principal, WorkloadPrincipal } from "@/lib/auth/principal";
import { db, pool } from "@/lib/db/client";
import { env } from "@/lib/env";
import { forbidden, notFound, payloadTooLarge, staleReport, validationFailed } from "@/lib/errors";
import type { JobOutputsInput } from "@/lib/pipelines/schemas";
import { agentMayReportOn } from "./placement-access";
import { getJobOrThrow } from "./queries";

/**
 * Stores a running placement's outputs: a small JSON object a later pipeline step reads. Posted by
 * the agent of the node it runs on (naming the placement by attempt and fence, like exit reports)
 * or by the workload itself with its placement's token. The attempt and fence are compared in the
 * statement that writes, together with the placement still being open: outputs about a placement
 * the job has moved on from, or one that ended, answer 409 stale_report and change nothing. Posting
 * again replaces the object.
 */
export async function postJobOutputs(
  p: AgentPrincipal | WorkloadPrincipal,
  jobId: string,
  input: JobOutputsInput,
  maxBytes = env().PIPELINE_OUTPUT_MAX_BYTES,
) {
  let attempt: number;
  let fence: string;
  if (p.kind === "workload") {
    if (p.placement !== "job" || p.jobId !== jobId) throw notFound("Job");
    if ((input.attempt !== undefined && input.attempt !== p.attempt) || (input.fence !== undefined && input.fence !== p.fence))
      throw staleReport("This token's placement is not the one named in the body");
    attempt = p.attempt;
    fence = p.fence;
  } else {
    const missing = (["attempt", "fence"] as const).filter((f) => input[f] === undefined);
    if (missing.length)
      throw validationFailed(
        missing.map((f) => ({
          path: f,
          message: "Agents must name the placement they report on (its heartbeat assignment's attempt and fence)",
        })),
      );
    attempt = input.attempt!;
    fence = input.fence!;
  }
  const text = JSON.stringify(input.outputs);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes)
    throw payloadTooLarge(
      `Outputs are ${bytes} bytes; a step's outputs may be at most ${maxBytes} (PIPELINE_OUTPUT_MAX_BYTES). Keep large results in storage and post their address`,
    );
  const cluster = p.kind === "agent" ? p.clusterId : null;
  const node = p.kind === "agent" ? (p.nodeId ?? null) : null;
  const { rows } = await pool().query<{ attempt: number }>(
    `UPDATE job_placements jp SET outputs = $4::jsonb, outputs_bytes = $5, outputs_at = now()
       FROM jobs j
      WHERE jp.job_id = $1 AND jp.attempt = $2 AND jp.fence = $3 AND jp.ended_at IS NULL
        AND j.id = jp.job_id AND j.status = 'running' AND j.attempts = jp.attempt AND j.fence = jp.fence
        AND ($6::uuid IS NULL OR EXISTS (SELECT 1 FROM nodes n WHERE n.id = ANY(jp.node_ids) AND n.cluster_id = $6 AND ($7::uuid IS NULL OR n.id = $7::uuid)))
      RETURNING jp.attempt`,
    [jobId, attempt, fence, text, bytes, cluster, node],
  );
  if (rows.length) return { job_id: jobId, attempt, bytes };
  // a placement this agent could have run but is not current: stale; anything else is not its business
  if (p.kind === "agent" && !(await agentMayReportOn(db(), p, jobId))) throw notFound("Job");
  throw staleReport("Outputs are accepted only from the job's current placement while it runs; nothing was stored");
}

/** A job's outputs, per attempt that posted any (the job's tenant, operators). */
export async function listJobOutputs(p: Principal, jobId: string) {
  if (p.kind !== "tenant" && p.kind !== "operator") throw forbidden("Outputs are read by the job's tenant and operators");
  await getJobOrThrow(p, jobId);
  const rows = await db().jobPlacement.findMany({
    where: { jobId, outputsAt: { not: null } },
    orderBy: { attempt: "desc" },
    select: { attempt: true, outputs: true, outputsBytes: true, outputsAt: true },
  });
  return rows.map((r) => ({ attempt: r.attempt, outputs: r.outputs, bytes: r.outputsBytes ?? 0, posted_at: r.outputsAt!.toISOString() }));
}
