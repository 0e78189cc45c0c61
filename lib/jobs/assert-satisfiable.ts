import "server-only";
import type { Tx } from "@/lib/db/client";
import { unsatisfiable, validationFailed, type FieldIssue } from "@/lib/errors";

/**
 * Refuses (422) work that can never run: more GPUs than the tenant's whole quota, or than the
 * fleet has of that type (in the named cluster). Used for jobs and for every pipeline step, so both
 * say no for the same reasons. `field` prefixes the paths of field errors (e.g. `steps[2].`).
 */
export async function assertSatisfiable(
  tx: Tx,
  work: { gpu_count: number; gpu_type: string; cluster_id?: string | null; quota: number },
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
  const capacity = await tx.gpu.count({
    where: { gpuType: work.gpu_type, status: { not: "missing" }, ...(work.cluster_id ? { node: { clusterId: work.cluster_id } } : {}) },
  });
  if (work.gpu_count > capacity) {
    throw unsatisfiable(
      `The fleet has ${capacity} ${work.gpu_type} GPUs${work.cluster_id ? " in that cluster" : ""}; the work needs ${work.gpu_count}`,
      issue(`The fleet has ${capacity} ${work.gpu_type} GPUs${work.cluster_id ? " in that cluster" : ""} in all: it could never start.`),
    );
  }
}
