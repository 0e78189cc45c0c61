import { startSimBmc, type SimBmc } from "../../agent/src/sim-bmc";
import { sealName } from "@/lib/bmc/bmc-json";
import { db } from "@/lib/db/client";
import { decodeKey } from "@/lib/env";
import { recordHeartbeat } from "@/lib/fleet/record-heartbeat";
import { sealSecret } from "@/lib/settings/secret-box";
import { E2E_SETTINGS_KEY } from "../support/settings-key";
import { registerNode } from "@/lib/fleet/register-node";
import { actorFor, agentPrincipal, unique } from "../support/fixtures";
import { api } from "../support/http";

// The walks' BMCs: simulated Redfish services in the test process (on loopback, which the e2e
// deployment lists in BMC_NETWORKS), stored on nodes through the API as an operator would. A
// node's simulated BMC "boots" it by heartbeating for its agent, so a provisioning the server's
// background runner carries out ends the way a real one does: the node moves on to inspection.

const sims: SimBmc[] = [];

/**
 * A registered node (provisioning starts from there) in `clusterId`, with a simulated BMC stored
 * through the API, or (`direct`: the walks' per-call nodes, where the API's PUT is not what is
 * tested) written straight into the database, sealed with the deployment's key as the PUT seals it.
 */
export async function nodeWithSimBmc(
  operatorKey: string,
  clusterId: string,
  opts: { direct?: boolean } = {},
): Promise<{ nodeId: string; hostname: string; bmc: SimBmc }> {
  const hostname = unique("bmc-node");
  const agent = actorFor(agentPrincipal(clusterId));
  const { node } = await registerNode(agent, { hostname, gpus: [] });
  const bmc = await startSimBmc({
    hostname,
    timing: { powerMs: 0, bootMs: 100, taskMs: 300 },
    on: { booted: () => void recordHeartbeat(agent, node.id, {}).catch(() => undefined) },
  });
  sims.push(bmc);
  if (opts.direct) {
    const key = decodeKey(E2E_SETTINGS_KEY)!;
    await db().nodeBmc.create({
      data: {
        nodeId: node.id,
        url: bmc.url,
        username: bmc.username,
        passwordCiphertext: sealSecret(key, sealName(node.id), bmc.password),
        verifyTls: false,
        updatedBy: "walk",
      },
    });
    return { nodeId: node.id, hostname, bmc };
  }
  const put = await api("PUT", `/api/nodes/${node.id}/bmc`, {
    key: operatorKey,
    body: { url: bmc.url, username: bmc.username, password: bmc.password, verify_tls: false },
  });
  if (put.status !== 200) throw new Error(`storing the walk's BMC failed: ${put.status} ${JSON.stringify(put.body)}`);
  return { nodeId: node.id, hostname, bmc };
}

/** The walk's BMC world: a node with a BMC, and one provisioned once already. */
export async function bmcWorld(operatorKey: string, clusterId: string) {
  const withBmc = await nodeWithSimBmc(operatorKey, clusterId);
  const provisioned = await nodeWithSimBmc(operatorKey, clusterId);
  const started = await api("POST", `/api/nodes/${provisioned.nodeId}/provision`, {
    key: operatorKey,
    body: { image_url: "http://images.example/walk.iso" },
  });
  if (started.status !== 202) throw new Error(`the walk's provisioning did not start: ${started.status} ${JSON.stringify(started.body)}`);
  return { withBmc, provisioned };
}
