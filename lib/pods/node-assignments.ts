import "server-only";
import { pool } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { workloadAccessSecret } from "@/lib/fleet/access-secret";
import type { PodAssignment } from "@/lib/fleet/assignments";
import { podContainerPorts } from "./ssh-key";
import { POD_ASSIGNMENTS } from "./statements";

/**
 * The pods a node must run now: each starting or running pod placed there, with its placement
 * (attempt and fence), GPUs, image, ports, SSH key and the access secret of its guarded ports. A stopping pod is no longer
 * listed: its node stops the container and confirms.
 */
export async function podAssignmentsForNode(nodeId: string): Promise<PodAssignment[]> {
  const rows = await run(pool(), POD_ASSIGNMENTS, [nodeId]);
  return rows.map((r) => ({
    kind: "pod" as const,
    pod_id: r.id,
    pod_name: r.name,
    attempt: r.attempt,
    fence: r.fence,
    gpu_ids: r.gpu_ids,
    image: r.image,
    ports: podContainerPorts(r.ports, r.ssh_public_key !== null),
    ...(r.ssh_public_key ? { ssh_public_key: r.ssh_public_key } : {}),
    logs_path: `/api/pods/${r.id}/logs`,
    status_path: `/api/pods/${r.id}/status`,
    access_secret: workloadAccessSecret("pod", r.id, r.fence),
  }));
}
