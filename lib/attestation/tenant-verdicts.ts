import "server-only";
import type { TenantPrincipal } from "@/lib/auth/principal";
import { pool } from "@/lib/db/client";
import { runOne } from "@/lib/db/statement";
import { TENANT_RECEIVED_NODE } from "./statements";
import { latestVerdicts, type AttestationJson } from "./verdict-queries";

/**
 * The latest signed verdict of each node of a reservation that its tenant has received (a holding
 * of its that began): the proof the node was wiped and clean when it was handed over. A node the
 * tenant has not received yet shows nothing of anyone else's.
 */
export async function tenantNodeVerdicts(p: TenantPrincipal, nodes: ReadonlyArray<{ node_id: string; hostname: string }>) {
  const received: Array<{ node_id: string; hostname: string }> = [];
  for (const n of nodes) if ((await runOne(pool(), TENANT_RECEIVED_NODE, [n.node_id, p.tenantId]))?.received) received.push(n);
  const verdicts = await latestVerdicts(
    pool(),
    received.map((n) => n.node_id),
  );
  return nodes.map((n) => ({
    nodeId: n.node_id,
    hostname: n.hostname,
    received: received.some((r) => r.node_id === n.node_id),
    verdict: (verdicts.get(n.node_id) ?? null) as AttestationJson | null,
  }));
}
