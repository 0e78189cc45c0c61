import type { OperatorTarget } from "./node-lifecycle";

/**
 * What runs on a node and what an operator's lifecycle action does to it (pure): the node page
 * lists the work, and the confirmation of drain, maintenance, quarantine or return to service
 * says which jobs and replicas it touches before anything happens.
 */

export interface NodeJob {
  id: string;
  name: string;
  tenant: string;
  /** GPUs of the job on this node, and in all (a gang may span nodes) */
  gpusHere: number;
  gpusTotal: number;
  startedAt: string | null;
  durationS: number | null;
}

export interface NodeReplica {
  id: string;
  endpointId: string;
  endpoint: string;
  tenant: string;
  status: string;
  gpusHere: number;
}

interface GpuHolding {
  allocatedJob: {
    id: string;
    name: string;
    gpuCount: number;
    startedAt: Date | null;
    durationS: number | null;
    tenant: { name: string };
  } | null;
  allocatedReplica: { id: string; status: string; endpoint: { id: string; name: string; tenant: { name: string } } } | null;
}

/** The jobs and endpoint replicas holding the node's GPUs, each once. */
export function nodeWorkload(gpus: GpuHolding[]): { jobs: NodeJob[]; replicas: NodeReplica[] } {
  const jobs = new Map<string, NodeJob>();
  const replicas = new Map<string, NodeReplica>();
  for (const g of gpus) {
    const j = g.allocatedJob;
    if (j) {
      const cur = jobs.get(j.id) ?? {
        id: j.id,
        name: j.name,
        tenant: j.tenant.name,
        gpusHere: 0,
        gpusTotal: j.gpuCount,
        startedAt: j.startedAt?.toISOString() ?? null,
        durationS: j.durationS,
      };
      cur.gpusHere++;
      jobs.set(j.id, cur);
    }
    const r = g.allocatedReplica;
    if (r) {
      const cur = replicas.get(r.id) ?? {
        id: r.id,
        endpointId: r.endpoint.id,
        endpoint: r.endpoint.name,
        tenant: r.endpoint.tenant.name,
        status: r.status,
        gpusHere: 0,
      };
      cur.gpusHere++;
      replicas.set(r.id, cur);
    }
  }
  return { jobs: [...jobs.values()], replicas: [...replicas.values()] };
}

const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** What happens to the node's work if the operator moves it to `target`, in sentences. */
export function describeNodeImpact(target: OperatorTarget, w: { jobs: NodeJob[]; replicas: NodeReplica[] }): string[] {
  const jobs = w.jobs.length;
  const replicas = w.replicas.length;
  switch (target) {
    case "draining":
      return [
        "No new work is placed on this node.",
        jobs
          ? `${n(jobs, "running job")} keep${jobs === 1 ? "s" : ""} running until ${jobs === 1 ? "it ends" : "they end"}.`
          : "No job runs here now.",
        replicas
          ? `${n(replicas, "endpoint replica", "endpoint replicas")} move${replicas === 1 ? "s" : ""} to other nodes; each keeps serving until its replacement is ready.`
          : "No endpoint replica runs here.",
      ];
    case "maintenance":
    case "quarantined":
      return [
        target === "maintenance"
          ? "The node leaves service for maintenance; it raises no unreachable alerts meanwhile."
          : "The node leaves service at once until an operator returns it.",
        jobs
          ? `${n(jobs, "running job")} ${jobs === 1 ? "is stopped and queued again (its" : "are stopped and queued again (their"} retries are not spent).`
          : "No job runs here now.",
        replicas
          ? `${n(replicas, "endpoint replica", "endpoint replicas")} ${replicas === 1 ? "is" : "are"} replaced on other nodes at once.`
          : "No endpoint replica runs here.",
      ];
    case "available":
      return ["The node takes new work again.", "Its GPUs' hardware flags (XID, ECC) are cleared: do this after inspection."];
  }
}
