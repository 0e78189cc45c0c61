import "server-only";
import type { Tx } from "@/lib/db/client";
import { run } from "@/lib/db/statement";
import { unsatisfiable, validationFailed, type FieldIssue } from "@/lib/errors";
import { markupPctOf, RUNS_CONTAINERS } from "@/lib/providers/registry";
import { markupBasisPoints } from "@/lib/providers/pricing";
import { PROVIDERS } from "@/lib/providers/vocabulary";
import { BURST_OFFER_FITS } from "./statements";

/**
 * Refuses (422) work that can never run: more GPUs than the tenant's whole quota, or than the
 * fleet has of that type (in the named cluster; on nodes that run containers, for work that runs
 * an image or a command). Used for jobs and for every pipeline step, so both
 * say no for the same reasons. `field` prefixes the paths of field errors (e.g. `steps[2].`).
 */
export async function assertSatisfiable(
  tx: Tx,
  work: {
    gpu_count: number;
    gpu_type: string;
    cluster_id?: string | null;
    quota: number;
    needs_containers?: boolean;
    /** a tenant that bursts (issue 30): work the fleet cannot hold may still run on a provider's offer within its cap */
    burst_tenant_id?: string;
  },
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
  if (work.gpu_count > capacity && !work.cluster_id && work.burst_tenant_id && (await burstCanHold(tx, work.burst_tenant_id, work))) return;
  if (work.gpu_count > capacity) {
    const where = `${work.cluster_id ? " in that cluster" : ""}${work.needs_containers ? " on nodes that run containers" : ""}`;
    throw unsatisfiable(
      `The fleet has ${capacity} ${work.gpu_type} GPUs${where}; the work needs ${work.gpu_count}`,
      issue(`The fleet has ${capacity} ${work.gpu_type} GPUs${where} in all: it could never start.`),
    );
  }
}

/**
 * What a burst price check needs in SQL (here and in the submit statement, lib/jobs/statements.ts):
 * every provider with its markup in basis points, and the providers whose instances run containers
 * (work with an image can burst only there).
 */
export function burstPriceTerms(): { providers: string[]; markups: number[]; containerProviders: string[] } {
  return {
    providers: [...PROVIDERS],
    markups: PROVIDERS.map((p) => markupBasisPoints(markupPctOf(p))),
    containerProviders: PROVIDERS.filter((p) => RUNS_CONTAINERS[p]),
  };
}

/**
 * While the tenant's burst is on: a cached offer of the type with enough GPUs whose price is within
 * its cap (from a provider whose instances run containers, when the work needs them) — our price,
 * cost × (1 + the markup in force), half up, for every GPU of the instance, per GPU of the work:
 * what the burst cycle compares (lib/burst/policy.ts), so work accepted here can be launched.
 */
async function burstCanHold(
  tx: Tx,
  tenantId: string,
  work: { gpu_count: number; gpu_type: string; needs_containers?: boolean },
): Promise<boolean> {
  const t = burstPriceTerms();
  const [row] = await run(tx, BURST_OFFER_FITS, [
    tenantId,
    work.gpu_type,
    work.gpu_count,
    Boolean(work.needs_containers),
    t.providers,
    t.markups,
    t.containerProviders,
  ]);
  return Boolean(row?.ok);
}

/**
 * Work that names a reservation: the caller tenant's own, still live, of the work's GPU type (and
 * cluster, if it names one), with GPUs enough for it, and long enough for its declared duration.
 */
export async function assertFitsReservation(
  tx: Tx,
  tenantId: string,
  work: { reservation_id: string; gpu_count: number; gpu_type: string; cluster_id?: string | null; duration_s?: number },
  field = "",
): Promise<void> {
  const path = `${field}reservation_id`;
  const [r] = await tx.$queryRaw<
    Array<{ gpu_type: string; status: string; starts_at: Date; ends_at: Date; gpus: number; clusters: string[] }>
  >`
    SELECT r.gpu_type, r.status, r.starts_at, r.ends_at,
           COALESCE((SELECT sum(h.gpu_count) FROM reservation_nodes h WHERE h.reservation_id = r.id AND h.live AND h.closed_at IS NULL AND h.ends_at = r.ends_at), 0)::int AS gpus,
           ARRAY(SELECT DISTINCT n.cluster_id::text FROM reservation_nodes h JOIN nodes n ON n.id = h.node_id WHERE h.reservation_id = r.id AND h.live) AS clusters
      FROM reservations r WHERE r.id = ${work.reservation_id}::uuid AND r.tenant_id = ${tenantId}::uuid`;
  if (!r) throw validationFailed([{ path, message: "No such reservation of yours" }]);
  if (!["confirmed", "active"].includes(r.status) || r.ends_at.getTime() <= Date.now())
    throw validationFailed([{ path, message: `This reservation is over (${r.status})` }]);
  if (r.gpu_type !== work.gpu_type)
    throw validationFailed([{ path: `${field}gpu_type`, message: `The reservation holds ${r.gpu_type} nodes` }]);
  if (work.cluster_id && !r.clusters.includes(work.cluster_id))
    throw validationFailed([{ path: `${field}cluster_id`, message: "The reservation's nodes are in another cluster" }]);
  if (work.gpu_count > r.gpus) {
    throw unsatisfiable(`The reservation holds ${r.gpus} GPUs; the work needs ${work.gpu_count}`, [
      { path: `${field}gpu_count`, message: `More than the reservation's ${r.gpus} GPUs` },
    ]);
  }
  const left = (r.ends_at.getTime() - Math.max(Date.now(), r.starts_at.getTime())) / 1000;
  if (work.duration_s && work.duration_s > left) {
    throw unsatisfiable(`The work declares ${work.duration_s} s but the reservation has ${Math.floor(left)} s left`, [
      { path: `${field}duration_s`, message: "Longer than what is left of the reservation" },
    ]);
  }
}
