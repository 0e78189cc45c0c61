import { clusters } from "@/lib/api/contracts";
import { getClusterOrThrow } from "@/lib/fleet/cluster-queries";
import { clusterJson } from "@/lib/fleet/cluster-schemas";
import { deleteCluster } from "@/lib/fleet/delete-cluster";
import { updateCluster } from "@/lib/fleet/update-cluster";
import { route } from "@/lib/http/route";

export const GET = route(clusters.getCluster, async ({ principal, params, reply }) =>
  reply(200, { cluster: clusterJson(await getClusterOrThrow(principal, params.id)) }),
);

export const PATCH = route(clusters.updateCluster, async ({ actor, params, body, reply }) =>
  reply(200, { cluster: clusterJson(await updateCluster(actor, params.id, body)) }),
);

export const DELETE = route(clusters.deleteCluster, async ({ actor, params, send }) => {
  await deleteCluster(actor, params.id);
  return send(204);
});
