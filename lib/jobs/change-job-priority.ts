import "server-only";
import { assertOperator, type Actor } from "@/lib/auth/principal";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { invalidTransition, notFound } from "@/lib/errors";

/**
 * An operator moves a waiting job up or down the queue (1 is highest). Audited, and written into
 * the job's own timeline so its tenant sees why it moved; the scheduler runs at once.
 */
export async function changeJobPriority(actor: Actor, jobId: string, priority: number, reason?: string) {
  assertOperator(actor.principal);
  const job = await db().$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ status: string; priority: number; tenant_id: string; name: string }>>`
      SELECT status, priority, tenant_id, name FROM jobs WHERE id = ${jobId}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row) throw notFound("Job");
    if (row.status !== "queued" && row.status !== "blocked")
      throw invalidTransition(`Only a waiting job's priority can change; this one is ${row.status}`);
    if (row.priority === priority) return { ...row, from: row.priority };
    await tx.job.update({ where: { id: jobId }, data: { priority } });
    const why = `priority ${row.priority} → ${priority}${reason ? `: ${reason}` : ""}`;
    await tx.jobEvent.create({ data: { jobId, fromStatus: row.status, toStatus: row.status, reason: why, actor: actor.principal.label } });
    await recordAudit(tx, actor, {
      action: "job.priority_changed",
      targetType: "job",
      targetId: jobId,
      tenantId: row.tenant_id,
      details: { name: row.name, from: row.priority, to: priority, ...(reason ? { reason } : {}) },
    });
    return { ...row, from: row.priority };
  });
  if (job.from !== priority) await emitEvent("scheduler/run.requested", { reason: "job priority changed" });
  return { name: job.name, from: job.from, to: priority };
}
