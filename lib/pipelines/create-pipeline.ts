import "server-only";
import type { z } from "zod";
import type { Actor, Principal } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { env } from "@/lib/env";
import { validationFailed } from "@/lib/errors";
import { zodIssuesToDetails } from "@/lib/http/error-response";
import { assertSatisfiable } from "@/lib/jobs/assert-satisfiable";
import { submittingTenant } from "@/lib/tenants/submitting-tenant";
import { assertUnderWaitingCap } from "@/lib/jobs/waiting-cap";
import { advanceInTx, logEvents, wake } from "./advance-pipeline";
import { pipelineInclude } from "./present";
import { createPipelineBody } from "./schemas";
import { DEFAULT_TOOL_TIMEOUT_S, loopOf, validateSpec } from "./spec";
import { LOCK_PIPELINE_TENANT } from "./statements";

/**
 * Whom a pipeline acts for, and with which role: a tenant's person (a session), or the owner of the
 * tenant key that submits it (a person or a service account, lib/api-keys/key-owner.ts). Its tool
 * calls use secrets only while that owner may (lib/pipelines/tool-calls/run-tool-calls.ts).
 */
async function pipelineStarter(p: Principal): Promise<{ userId: string | null; serviceAccountId: string | null; role: string | null }> {
  if (p.kind !== "tenant") return { userId: null, serviceAccountId: null, role: null };
  if (p.userId) return { userId: p.userId, serviceAccountId: null, role: p.role };
  const key = p.keyId
    ? await db().apiKey.findUnique({ where: { id: p.keyId }, select: { ownerUserId: true, serviceAccountId: true } })
    : null;
  // a key's principal already carries its owner's role at most (lib/api-keys/authenticate-api-key.ts)
  return { userId: key?.ownerUserId ?? null, serviceAccountId: key?.serviceAccountId ?? null, role: key ? p.role : null };
}

/**
 * Accepts a pipeline: the spec is validated in full before anything runs (the DAG, loops, every
 * expression's references, tool calls' hosts, endpoints and secrets → 400 naming step and field),
 * every job step must be able to run at all (422), and its root steps start in the same transaction.
 */
export async function createPipeline(actor: Actor, request: z.input<typeof createPipelineBody>) {
  // the route has parsed it already; the editor's server action hands over what the YAML said
  const parsed = createPipelineBody.safeParse(request);
  if (!parsed.success) throw validationFailed(zodIssuesToDetails(parsed.error.issues, "spec"), "The pipeline is not valid");
  const input = parsed.data;
  const tenantId = submittingTenant(actor, input.tenant_id);
  const [endpoints, secrets, starter] = await Promise.all([
    db().endpoint.findMany({ where: { tenantId, deletedAt: null }, select: { name: true } }),
    db().tenantSecret.findMany({ where: { tenantId }, select: { name: true, usableBy: true } }),
    pipelineStarter(actor.principal),
  ]);
  // the secrets whoever starts it may use: an admin all, a member those usable by members,
  // anyone else (an operator starting a tenant's pipeline) none
  const usable = secrets.filter(
    (s) => starter.role === "tenant_admin" || (starter.role === "tenant_member" && s.usableBy === "tenant_member"),
  );
  const issues = validateSpec(input, {
    allowedHosts: env().TOOL_CALL_ALLOWED_HOSTS,
    endpoints: new Set(endpoints.map((e) => e.name)),
    secrets: new Set(secrets.map((s) => s.name)),
    usableSecrets: new Set(usable.map((s) => s.name)),
    unusableReason:
      starter.role === "tenant_member"
        ? "this secret is for tenant admins' pipelines (an admin chooses who may use each secret)"
        : "a tenant's secrets are used only by pipelines its own people start",
  });
  if (issues.length) throw validationFailed(issues, "The pipeline is not valid");
  const created = await db().$transaction(async (tx) => {
    const [tenant] = await run(tx, LOCK_PIPELINE_TENANT, [tenantId]);
    if (!tenant) throw validationFailed([{ path: "tenant_id", message: "No such tenant" }]);
    const tooHigh = input.steps.flatMap((s, i) =>
      s.kind === "job" && s.priority < tenant.maxPriority
        ? [
            {
              path: `steps[${i}].priority`,
              message: `Your organisation's highest allowed priority is ${tenant.maxPriority} (1 is highest)`,
            },
          ]
        : [],
    );
    if (tooHigh.length) throw validationFailed(tooHigh);
    await assertUnderWaitingCap(tx, tenantId);
    for (const [i, s] of input.steps.entries()) {
      if (s.kind !== "job") continue;
      // steps run as jobs: a command needs an image (the operator's default at the least)
      if (s.command && !s.image && !env().DEFAULT_JOB_IMAGE) {
        throw validationFailed([
          {
            path: `steps[${i}].image`,
            message: `Step “${s.name}”: required with a command: commands run only inside a container image, and no default image is configured`,
          },
        ]);
      }
      await assertSatisfiable(
        tx,
        { gpu_count: s.gpu_count!, gpu_type: s.gpu_type!, quota: tenant.gpuQuota, needs_containers: Boolean(s.image || s.command) },
        `steps[${i}].`,
      );
    }
    const deadlineAt = input.deadline_s ? new Date(Date.now() + input.deadline_s * 1000) : null;
    const pipeline = await tx.pipeline.create({
      data: {
        tenantId,
        name: input.name,
        deadlineAt,
        spec: request as object,
        startedByUserId: starter.userId,
        startedByServiceAccountId: starter.serviceAccountId,
      },
    });
    await tx.pipelineStep.createMany({
      data: input.steps.map((s, i) => {
        const loop = loopOf(s);
        const retry = s.retry;
        return {
          pipelineId: pipeline.id,
          name: s.name,
          position: i,
          kind: s.kind,
          dependsOn: s.depends_on ?? [],
          gpuCount: s.gpu_count ?? null,
          gpuType: s.gpu_type ?? null,
          priority: s.priority,
          maxRetries: retry?.max ?? s.max_retries,
          retryBackoffS: retry?.backoff_s ?? 10,
          retryBackoffFactor: retry?.backoff_factor ?? 2,
          retryBackoffMaxS: retry?.max_backoff_s ?? 600,
          retryOn: retry?.on_exit_codes ?? retry?.on_status ?? [],
          repeat: loop?.max ?? 1,
          loopFrom: loop?.from ?? null,
          loopUntil: loop?.until ?? null,
          loopTimeoutS: loop?.timeoutS ?? null,
          loopOnExhausted: loop?.onExhausted ?? null,
          image: s.image ?? null,
          command: s.command ?? null,
          env: s.env ?? {},
          durationS: s.duration_s ?? null,
          request: s.request ? (s.request as object) : undefined,
          timeoutS: s.kind === "job" ? null : (s.timeout_s ?? DEFAULT_TOOL_TIMEOUT_S),
          declaredOutputs: s.outputs ?? [],
        };
      }),
    });
    await logEvents(tx, pipeline.id, [
      {
        step: null,
        kind: "submitted",
        message: `submitted with ${input.steps.length} step(s)${deadlineAt ? `; deadline ${deadlineAt.toISOString()}` : ""}`,
        details: { steps: input.steps.length, deadline_s: input.deadline_s ?? null },
      },
    ]);
    const started = await advanceInTx(tx, pipeline.id);
    await recordAudit(tx, actor, {
      action: "pipeline.created",
      targetType: "pipeline",
      targetId: pipeline.id,
      tenantId,
      details: { name: input.name, steps: input.steps.length },
    });
    return { started, pipeline: await tx.pipeline.findUniqueOrThrow({ where: { id: pipeline.id }, include: pipelineInclude }) };
  });
  await wake(created.started);
  return created.pipeline;
}
