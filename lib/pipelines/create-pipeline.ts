import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { validationFailed } from "@/lib/errors";
import { assertSatisfiable } from "@/lib/jobs/assert-satisfiable";
import { submittingTenant } from "@/lib/jobs/submit-job";
import { assertUnderWaitingCap } from "@/lib/jobs/waiting-cap";
import { advanceInTx } from "./advance-pipeline";
import { validateDag } from "./dag";
import { pipelineInclude, type CreatePipelineInput } from "./schemas";

/**
 * Accepts a pipeline: the DAG is validated (unknown steps, duplicates, cycles → 400 naming the
 * field), every step must be able to run at all (422), and its root steps are submitted as jobs
 * in the same transaction.
 */
export async function createPipeline(actor: Actor, input: CreatePipelineInput) {
  const tenantId = submittingTenant(actor, input.tenant_id);
  const issues = validateDag(input.steps);
  if (issues.length) throw validationFailed(issues, "The pipeline is not a valid DAG");
  const pipeline = await db().$transaction(async (tx) => {
    const [tenant] = await tx.$queryRaw<Array<{ gpuQuota: number; maxPriority: number }>>`
      SELECT gpu_quota AS "gpuQuota", max_priority AS "maxPriority" FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
    if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    const tooHigh = input.steps.flatMap((s, i) => (s.priority < tenant.maxPriority ? [{ path: `steps[${i}].priority`, message: `Your organisation's highest allowed priority is ${tenant.maxPriority} (1 is highest)` }] : []));
    if (tooHigh.length) throw validationFailed(tooHigh);
    await assertUnderWaitingCap(tx, tenantId);
    for (const [i, s] of input.steps.entries()) {
      // steps run as jobs: a command needs an image (the operator's default at the least)
      if (s.command && !s.image && !env().DEFAULT_JOB_IMAGE) {
        throw validationFailed([{ path: `steps[${i}].image`, message: "Required with a command: commands run only inside a container image, and no default image is configured" }]);
      }
      await assertSatisfiable(tx, { ...s, quota: tenant.gpuQuota, needs_containers: Boolean(s.image || s.command) }, `steps[${i}].`);
    }
    const created = await tx.pipeline.create({ data: { tenantId, name: input.name } });
    await tx.pipelineStep.createMany({
      data: input.steps.map((s, i) => ({
        pipelineId: created.id,
        name: s.name,
        position: i,
        dependsOn: s.depends_on ?? [],
        gpuCount: s.gpu_count,
        gpuType: s.gpu_type,
        priority: s.priority,
        maxRetries: s.max_retries,
        repeat: s.repeat,
        image: s.image ?? null,
        command: s.command ?? null,
        durationS: s.duration_s ?? null,
      })),
    });
    await tx.pipelineEvent.create({ data: { pipelineId: created.id, message: `submitted with ${input.steps.length} step(s)` } });
    await advanceInTx(tx, created.id);
    await recordAudit(tx, actor, { action: "pipeline.created", targetType: "pipeline", targetId: created.id, tenantId, details: { name: input.name, steps: input.steps.length } });
    return tx.pipeline.findUniqueOrThrow({ where: { id: created.id }, include: pipelineInclude });
  });
  await emitEvent("scheduler/run.requested", { reason: "pipeline submitted" });
  return pipeline;
}
