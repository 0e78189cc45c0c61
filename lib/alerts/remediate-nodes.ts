import "server-only";
import { recordAudit } from "@/lib/audit/record-audit";
import { systemActor } from "@/lib/auth/principal";
import { emitEvent } from "@/lib/background/emit";
import { db, txClient } from "@/lib/db/client";
import { run, runOne } from "@/lib/db/statement";
import { effectiveSettings } from "@/lib/settings/settings";
import { applyNodeTransition } from "@/lib/fleet/apply-node-transition";
import { stopWorkflowIfLeft } from "@/lib/fleet/node-workflows";
import { requeueJobsOnNodes } from "@/lib/jobs/requeue-lost-jobs";
import { interruptPodsOnNodes } from "@/lib/pods/interrupt-pods";
import { lockPrismaTransaction } from "@/lib/db/locks";
import { enqueueNotifications } from "./notification-outbox";
import { decideRemediations, type RemediationCandidate } from "./remediation-cap";
import { FIRE_JOBS_MOVED, NODES_TO_REMEDIATE, QUARANTINES_IN_WINDOW, RECORD_CAPPED_REMEDIATIONS } from "./statements";

export interface NodeFault extends RemediationCandidate {
  alert_event_id: string | null;
  summary: string;
}

export interface RemediationOutcome {
  quarantined: Array<{ node_id: string; cause: string; jobs_requeued: string[] }>;
  capped: Array<{ node_id: string; cause: string }>;
  used_in_window: number;
  cap: number;
}

/** The same 64-bit key in every app instance: remediation decisions are taken one at a time, fleet-wide. */
const ACTOR = "remediation";

/**
 * Quarantines nodes with hardware faults, within the blast-radius cap. Under a Postgres advisory
 * lock it counts the automatic quarantines of the window in the remediations table, so the cap
 * holds across app instances; past it a critical alert calls a human instead. A node is decided
 * once per fault: after a quarantine or a capped decision nothing happens to it automatically
 * until an operator returns it to service. Jobs on a quarantined node are requeued without
 * spending their tenants' retries, and each tenant sees why its job moved.
 */
export async function remediateNodes(faults: NodeFault[], opts: { cap?: number; windowS?: number } = {}): Promise<RemediationOutcome> {
  if (faults.length === 0) return { quarantined: [], capped: [], used_in_window: 0, cap: opts.cap ?? 0 };
  // the cap in force: the console's setting over the environment's (read only when there is something to decide)
  const inForce = opts.cap === undefined || opts.windowS === undefined ? (await effectiveSettings()).remediation : null;
  const cap = opts.cap ?? inForce!.cap;
  const windowS = opts.windowS ?? inForce!.windowS;

  const result = await db().$transaction(
    async (tx) => {
      await lockPrismaTransaction(tx, "remediation");
      const ids = [...new Set(faults.map((f) => f.node_id))];
      const isXid = (f: NodeFault) => f.cause.startsWith("fatal_xid:");
      const xidOnlyNodeIds = ids.filter((id) => faults.every((f) => f.node_id !== id || isXid(f)));
      // Re-read under the lock: another remediator may have decided these nodes a moment ago, and
      // an operator may have returned a node after its facts were read (a fatal XID fault still
      // holds only while a GPU of the node is unhealthy for it; returning the node clears that).
      const nodes = await run(tx, NODES_TO_REMEDIATE, [ids, xidOnlyNodeIds]);
      const byId = new Map(nodes.map((n) => [n.id, n]));
      const eligible = faults.filter((f) => byId.has(f.node_id));
      const { used } = (await runOne(tx, QUARANTINES_IN_WINDOW, [windowS]))!;
      const decision = decideRemediations(eligible, used, cap);

      const quarantined: RemediationOutcome["quarantined"] = [];
      for (const f of decision.quarantine) {
        const node = byId.get(f.node_id)!;
        const t = await applyNodeTransition(tx, node, { kind: "auto_quarantine" }, `automatic quarantine: ${f.summary}`, ACTOR);
        await stopWorkflowIfLeft(tx, node, t, `automatic quarantine: ${f.summary}`);
        const requeued = await requeueJobsOnNodes(tx, [node.id], `node ${node.hostname} quarantined (${f.summary})`, ACTOR);
        await interruptPodsOnNodes(txClient(tx), [node.id], `its node was quarantined after a hardware fault (${f.summary})`, ACTOR);
        await tx.remediation.create({
          data: {
            nodeId: node.id,
            alertEventId: f.alert_event_id,
            cause: f.cause,
            outcome: "quarantined",
            jobsRequeued: requeued.length,
            details: { hostname: node.hostname, summary: f.summary, jobs: requeued, from_status: node.status, cap, window_s: windowS },
          },
        });
        if (requeued.length) {
          // each tenant sees that its job moved, and why; it resolves once the job runs again
          await run(tx, FIRE_JOBS_MOVED, [f.summary, requeued, node.id]);
        }
        await recordAudit(tx, systemActor, {
          action: "node.auto_quarantined",
          targetType: "node",
          targetId: node.id,
          details: { hostname: node.hostname, cause: f.cause, summary: f.summary, jobs_requeued: requeued.length },
        });
        quarantined.push({ node_id: node.id, cause: f.cause, jobs_requeued: requeued });
      }

      // everything past the cap, in two statements however many nodes failed at once
      const capped = decision.capped;
      const cappedEventIds = capped.length
        ? (
            await run(tx, RECORD_CAPPED_REMEDIATIONS, [
              capped.map((f) => f.node_id),
              capped.map((f) => f.cause),
              capped.map((f) => f.summary),
              capped.map((f) => f.alert_event_id),
              used,
              cap,
              windowS,
              Math.round(windowS / 60),
            ])
          )
            .filter((r) => r.inserted)
            .map((r) => r.id)
        : [];
      return { quarantined, capped: decision.capped.map((f) => ({ node_id: f.node_id, cause: f.cause })), used, cappedEventIds };
    },
    { timeout: 30_000, maxWait: 30_000 },
  );

  if (result.quarantined.some((q) => q.jobs_requeued.length)) await emitEvent("scheduler/run.requested", { reason: "nodes quarantined" });
  // endpoint replicas on those nodes are replaced elsewhere now, not at the next sweep
  if (result.quarantined.length) await emitEvent("endpoints/reconcile.requested", { reason: "nodes quarantined" });
  // a human must hear about a capped remediation whatever the rule's notification setting
  await enqueueNotifications(result.cappedEventIds, "firing");
  return { quarantined: result.quarantined, capped: result.capped, used_in_window: result.used + result.quarantined.length, cap };
}
