import "server-only";
import { pool } from "@/lib/db/client";
import type { PodAssignment } from "@/lib/fleet/assignments";
import { podContainerPorts } from "./ssh-key";

/**
 * The pods a node must run now: each starting or running pod placed there, with its placement
 * (attempt and fence), GPUs, image, ports to publish and SSH key. A stopping pod is no longer
 * listed: its node stops the container and confirms.
 */
export async function podAssignmentsForNode(nodeId: string): Promise<PodAssignment[]> {
  const { rows } = await pool().query<{ id: string; name: string; attempt: number; fence: string; image: string; ports: number[]; ssh_public_key: string | null; gpu_ids: string[] }>(
    `SELECT p.id::text, p.name, pl.attempt, pl.fence::text AS fence, p.image, p.ports, p.ssh_public_key, pl.gpu_ids::text[] AS gpu_ids
       FROM pods p JOIN pod_placements pl ON pl.pod_id = p.id AND pl.attempt = p.attempts AND pl.ended_at IS NULL
      WHERE p.node_id = $1 AND p.status IN ('starting', 'running') ORDER BY pl.started_at`,
    [nodeId],
  );
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
  }));
}
