import "server-only";
import type { Actor } from "@/lib/auth/principal";
import { scopedTenantId } from "@/lib/auth/tenant-scope";
import { recordAudit } from "@/lib/audit/record-audit";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { forbidden, invalidTransition, notFound } from "@/lib/errors";
import { lockPrismaTransaction } from "@/lib/db/locks";
import { run } from "@/lib/db/statement";
import { movePods } from "./move-pods";
import { lockTenant } from "@/lib/tenants/lock-tenant";
import { assertPodLimit } from "@/lib/tenants/tenant-limits";
import { podStatusOf, podTransition } from "./pod-lifecycle";
import { getPodOrThrow } from "./queries";
import { LOCK_POD, RESOLVE_POD_INTERRUPTED } from "./statements";

export type PodAction = "stop" | "start" | "terminate";

const REASONS: Record<PodAction, string> = {
  stop: "stopped on request; GPUs released, billing stopped",
  start: "started on request; waiting to be placed",
  terminate: "terminated on request",
};

/**
 * A tenant's (or operator's) stop, start or terminate. Stop and terminate release the pod's GPUs
 * and end its billing in the same transaction (the node stops its container on its next
 * heartbeat); start puts it back in the scheduler's queue, to be placed again, possibly on another
 * node. Under the allocation lock, so no scheduling cycle places the pod between the read and the
 * write. An action the state machine refuses answers 409 invalid_transition and changes nothing.
 */
export async function changePodState(actor: Actor, id: string, action: PodAction) {
  const p = actor.principal;
  if (p.kind !== "tenant" && p.kind !== "operator") throw forbidden("Only the pod's tenant or an operator may do this");
  await db().$transaction(async (tx) => {
    await lockPrismaTransaction(tx, "scheduler");
    const rows = (await run(tx, LOCK_POD, [id, scopedTenantId(p)])).map((r) => ({ ...r, status: podStatusOf(r.status) }));
    const pod = rows[0];
    if (!pod) throw notFound("Pod");
    const t = podTransition(pod.status, { kind: action });
    if (!t.ok) throw invalidTransition(t.reason);
    if (action === "start") {
      // active and within its pod limit (the tenant's row lock orders this against parallel creates and starts)
      await lockTenant(tx, pod.tenant_id);
      await assertPodLimit(tx, pod.tenant_id);
    }
    await movePods(txClient(tx), [{ id, from: pod.status, to: t.to, reason: REASONS[action] }], p.label);
    // the tenant acted on an interrupted pod: the alert about it has done its work
    await run(tx, RESOLVE_POD_INTERRUPTED, [id]);
    await recordAudit(tx, actor, {
      action: `pod.${action === "stop" ? "stopped" : action === "start" ? "started" : "terminated"}`,
      targetType: "pod",
      targetId: id,
      tenantId: pod.tenant_id,
      details: { name: pod.name, from: pod.status, to: t.to },
    });
  });
  // a start waits for a cycle; a stop or terminate frees GPUs that waiting work can take
  await emitEvent("scheduler/run.requested", { reason: `pod ${action}` });
  return getPodOrThrow(p, id);
}
