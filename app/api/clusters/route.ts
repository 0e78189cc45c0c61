import { clusters } from "@/lib/api/contracts";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { clusterJson } from "@/lib/fleet/cluster-schemas";
import { createCluster } from "@/lib/fleet/create-cluster";
import { route } from "@/lib/http/route";

export const POST = route(clusters.createCluster, async ({ actor, body, reply }) =>
  reply(201, { cluster: clusterJson(await createCluster(actor, body)) }),
);

export const GET = route(clusters.listClusters, async ({ principal, query, reply }) => {
  const { data, nextCursor } = await listClusters(principal, query);
  return reply(200, { data: data.map(clusterJson), next_cursor: nextCursor });
});
