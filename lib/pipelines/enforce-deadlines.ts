import "server-only";
import { systemActor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { LOCK_PIPELINE_PAST_DEADLINE } from "./statements";
import { stopPipelineInTx } from "./stop-pipeline";

/** Fails every running pipeline past its deadline, cancelling its work (the sweep runs it). */
export async function enforcePipelineDeadlines(now = new Date()): Promise<{ expired: number }> {
  const due = await db().pipeline.findMany({
    where: { status: "running", deadlineAt: { lte: now } },
    select: { id: true, deadlineAt: true },
  });
  let expired = 0;
  let freed = 0;
  for (const p of due) {
    const r = await db().$transaction(async (tx) => {
      const rows = await run(tx, LOCK_PIPELINE_PAST_DEADLINE, [p.id, now]);
      if (rows[0]?.status !== "running") return null;
      return stopPipelineInTx(tx, systemActor, p.id, {
        status: "failed",
        reason: `its deadline (${p.deadlineAt!.toISOString()}) passed`,
        kind: "deadline",
      });
    });
    if (r) {
      expired++;
      freed += r.freed;
    }
  }
  if (freed) await emitEvent("scheduler/run.requested", { reason: "pipeline deadline" });
  return { expired };
}
