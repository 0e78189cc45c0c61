import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { scopedTenantId } from "@/lib/auth/tenant-scope";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { forbidden, invalidTransition, notFound } from "@/lib/errors";
import { pipelineInclude } from "./present";
import { LOCK_PIPELINE } from "./statements";
import { stopPipelineInTx } from "./stop-pipeline";

/** Locks a pipeline of the caller's (a tenant its own, an operator any) for a change of state. */
export async function lockPipelineOrThrow(tx: Parameters<typeof stopPipelineInTx>[0], actor: Actor, id: string) {
  const p = actor.principal;
  if (p.kind !== "tenant" && p.kind !== "operator") throw forbidden("Pipelines belong to tenants");
  const rows = await run(tx, LOCK_PIPELINE, [id, scopedTenantId(p)]);
  const row = rows[0];
  if (!row) throw notFound("Pipeline");
  return row;
}

/** Cancels a running pipeline: its running jobs are cancelled, its waiting steps skipped; audited. */
export async function cancelPipeline(actor: Actor, id: string) {
  const { freed } = await db().$transaction(async (tx) => {
    const row = await lockPipelineOrThrow(tx, actor, id);
    if (row.status !== "running") throw invalidTransition(`A ${row.status} pipeline cannot be cancelled`);
    return stopPipelineInTx(tx, actor, id, { status: "cancelled", reason: `cancelled by ${actor.principal.label}`, kind: "control" });
  });
  if (freed) await emitEvent("scheduler/run.requested", { reason: "pipeline cancelled" });
  return db().pipeline.findUniqueOrThrow({ where: { id }, include: pipelineInclude });
}
