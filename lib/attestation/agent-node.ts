import "server-only";
import type { Principal } from "@/lib/auth/principal";
import { run, type Runner } from "@/lib/db/statement";
import { forbidden, notFound } from "@/lib/errors";
import { NODE_OF_AGENT } from "./node-statements";

/**
 * The node an agent acts for: its own cluster's node (or, for a node-bound key, its own node), and
 * nothing else. Another cluster's node, or another node than a bound key's, is not found: an agent
 * key never learns whether someone else's node exists.
 */
export async function agentNodeOrThrow(client: Runner, p: Principal, nodeId: string) {
  if (p.kind !== "agent") throw forbidden("Only the node's agent sends its attestation evidence and wipe reports");
  if (p.nodeId && p.nodeId !== nodeId) throw notFound("Node");
  const [node] = await run(client, NODE_OF_AGENT, [nodeId, p.clusterId]);
  if (!node) throw notFound("Node");
  return node;
}
