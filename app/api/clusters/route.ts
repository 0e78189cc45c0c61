import { clusters } from "@/lib/api/contracts";
import { listClusters } from "@/lib/fleet/cluster-queries";
import { clusterJson } from "@/lib/fleet/cluster-schemas";
import { createCluster } from "@/lib/fleet/create-cluster";
import { json, route } from "@/lib/http/route";

export const POST = route(clusters.createCluster, async ({ actor, body }) =>
  json(201, { cluster: clusterJson(await createCluster(actor, body)) }),
);

export const GET = route(clusters.listClusters, async ({ principal, query }) => {
  const { data, nextCursor } = await listClusters(principal, query);
  return json(200, { data: data.map(clusterJson), next_cursor: nextCursor });
});
