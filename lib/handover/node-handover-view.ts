import "server-only";
import { identityJson } from "@/lib/attestation/identity-queries";
import { LIVE_IDENTITY } from "@/lib/attestation/statements";
import { latestVerdicts } from "@/lib/attestation/verdict-queries";
import { pool } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { currentNodeLease } from "@/lib/fleet/node-lease";
import { transition, type NodeState } from "@/lib/fleet/node-lifecycle";
import { listNodeWorkflows } from "@/lib/fleet/node-workflows";
import { workflowJson } from "./workflow-json";

/**
 * What the node page shows of its handovers: the timeline of its latest workflows (each step with
 * its lease token), its latest signed verdict, its pinned attestation key, who holds its lease,
 * and which handover actions an operator may take from its state.
 */
export async function nodeHandoverView(nodeId: string, state: NodeState, dueSince: Date | null) {
  const [workflows, verdicts, identity, lease] = await Promise.all([
    listNodeWorkflows(pool(), nodeId, 6),
    latestVerdicts(pool(), [nodeId]),
    runOne(pool(), LIVE_IDENTITY, [nodeId]),
    currentNodeLease(pool(), nodeId),
  ]);
  const running = workflows.some((w) => w.status === "running");
  const can = (mode: "full" | "inspect") => !running && transition(state, { kind: "handover", mode }).ok;
  return {
    workflows: workflows.map(workflowJson),
    verdict: verdicts.get(nodeId) ?? null,
    identity: identity ? identityJson(identity) : null,
    lease: lease && {
      token: lease.token,
      holder: lease.holder,
      purpose: lease.purpose,
      live: lease.live,
      expiresAt: lease.expires_at.toISOString(),
    },
    dueSince: dueSince?.toISOString() ?? null,
    can: { handover: can("full"), inspect: can("inspect"), reenrol: identity !== undefined && identity !== null },
  };
}

export type NodeHandoverView = Awaited<ReturnType<typeof nodeHandoverView>>;
