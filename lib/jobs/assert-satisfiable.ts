import "server-only";
import type { Tx } from "@/lib/db/client";
import { unsatisfiable, validationFailed, type FieldIssue } from "@/lib/errors";

/**
 * Refuses (422) work that can never run: more GPUs than the tenant's whole quota, or than the
 * fleet has of that type (in the named cluster; on nodes that run containers, for work that runs
 * an image or a command). Used for jobs and for every pipeline step, so both
 * say no for the same reasons. `field` prefixes the paths of field errors (e.g. `steps[2].`).
 */
export async function assertSatisfiable(
  tx: Tx,
  work: { gpu_count: number; gpu_type: string; cluster_id?: string | null; quota: number; needs_containers?: boolean },
  field = "",
): Promise<void> {
  const issue = (message: string): FieldIssue[] => [{ path: `${field}gpu_count`, message }];
  if (work.gpu_count > work.quota) {
    throw unsatisfiable(
      `The work needs ${work.gpu_count} GPUs but the tenant's whole quota is ${work.quota}`,
      issue(`More than your organisation's quota of ${work.quota} GPUs: it could never start. Ask your operator for a larger quota.`),
    );
  }
  if (work.cluster_id && !(await tx.cluster.count({ where: { id: work.cluster_id } }))) {
    throw validationFailed([{ path: `${field}cluster_id`, message: "No such cluster" }]);
  }
  const node = { ...(work.cluster_id ? { clusterId: work.cluster_id } : {}), ...(work.needs_containers ? { containers: true } : {}) };
  const capacity = await tx.gpu.count({
    where: { gpuType: work.gpu_type, status: { not: "missing" }, ...(Object.keys(node).length ? { node } : {}) },
  });
  if (work.gpu_count > capacity) {
    const where = `${work.cluster_id ? " in that cluster" : ""}${work.needs_containers ? " on nodes that run containers" : ""}`;
    throw unsatisfiable(
      `The fleet has ${capacity} ${work.gpu_type} GPUs${where}; the work needs ${work.gpu_count}`,
      issue(`The fleet has ${capacity} ${work.gpu_type} GPUs${where} in all: it could never start.`),
    );
  }
}
