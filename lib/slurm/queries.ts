import "server-only";
import { z } from "zod";
import type { Principal } from "@/lib/auth/principal";
import { db } from "@/lib/db/client";
import { notFound } from "@/lib/errors";
import { getClusterOrThrow } from "@/lib/fleet/cluster-queries";
import { getJobOrThrow } from "@/lib/jobs/queries";
import { oneOf } from "@/lib/vocabulary";
import { jobPhase } from "./job-state";
import { parseSlurmNodeState, readSlurmNode } from "./node-state";
import { CONTAINER_MODES, reportSlurmClusterBody, type SlurmAttemptJson, type SlurmPartition } from "./schemas";

// Reads of the Slurm side: a cluster's Slurm picture, a job's Slurm jobs with their history, and
// what the console shows beside nodes and on the fleet floor.

const partitionsOf = (raw: unknown): SlurmPartition[] => {
  const parsed = reportSlurmClusterBody.shape.partitions.safeParse(raw);
  return parsed.success ? parsed.data : [];
};

/** A Slurm cluster as the API answers it, or null when its bridge never reported. */
export async function readSlurmCluster(clusterId: string) {
  const s = await db().slurmCluster.findUnique({ where: { clusterId } });
  if (!s) return null;
  return {
    cluster_id: s.clusterId,
    slurm_cluster_name: s.slurmClusterName,
    slurm_version: s.slurmVersion,
    container_mode: oneOf(CONTAINER_MODES, s.containerMode, "slurm_clusters.container_mode"),
    partitions: partitionsOf(s.partitions),
    settings: z.record(z.string(), z.unknown()).catch({}).parse(s.settings),
    bridge: { id: s.bridgeId, host: s.bridgeHost, version: s.bridgeVersion, reported_at: s.reportedAt.toISOString() },
  };
}

/** GET /api/clusters/{id}/slurm: operators, and the cluster's own agent key. */
export async function getSlurmClusterOrThrow(p: Principal, clusterId: string) {
  await getClusterOrThrow(p, clusterId);
  const s = await readSlurmCluster(clusterId);
  if (!s) throw notFound("Slurm cluster");
  return s;
}

type SlurmJobRow = Awaited<ReturnType<typeof attemptRows>>[number];

function attemptRows(jobId: string, attempt?: number) {
  return db().slurmJob.findMany({
    where: { jobId, ...(attempt !== undefined ? { attempt } : {}) },
    orderBy: { attempt: "desc" },
    include: { events: { orderBy: { id: "asc" }, take: 200 } },
  });
}

function slurmAttemptJson(r: SlurmJobRow): SlurmAttemptJson {
  return {
    attempt: r.attempt,
    slurm_job_id: r.slurmJobId,
    account: r.account,
    partition: r.partition,
    state: r.state,
    reason: r.reason,
    nodes: r.nodes,
    exit_code: r.exitCode,
    submitted_at: r.submittedAt?.toISOString() ?? null,
    started_at: r.startedAt?.toISOString() ?? null,
    ended_at: r.endedAt?.toISOString() ?? null,
    history: r.events.map((e) => ({ state: e.state, reason: e.reason, slurm_job_id: e.slurmJobId, at: e.createdAt.toISOString() })),
  };
}

/** One attempt's Slurm record, as reports answer it. */
export async function slurmAttempt(jobId: string, attempt: number): Promise<SlurmAttemptJson | null> {
  const [row] = await attemptRows(jobId, attempt);
  return row ? slurmAttemptJson(row) : null;
}

/** GET /api/jobs/{id}/slurm: whoever may see the job (its tenant, operators, its cluster's agent). */
export async function jobSlurm(p: Principal, jobId: string) {
  await getJobOrThrow(p, jobId);
  const data = (await attemptRows(jobId)).map(slurmAttemptJson);
  return { slurm_job_id: data.find((a) => a.slurm_job_id)?.slurm_job_id ?? null, data };
}

/** The job page's Slurm card: each attempt and each state it went through, with what the state means. */
export async function jobSlurmView(p: Principal, jobId: string) {
  const { data } = await jobSlurm(p, jobId);
  return data.map((a) => ({ ...a, phase: jobPhase(a.state), history: a.history.map((h) => ({ ...h, phase: jobPhase(h.state) })) }));
}

/** What the node page shows of a Slurm node beside GPUForge's own state. */
export async function slurmNodeView(nodeId: string) {
  const s = await db().slurmNode.findUnique({ where: { nodeId } });
  if (!s) return null;
  const foreign = z
    .array(
      z.object({
        slurm_job_id: z.string().nullable(),
        user: z.string().nullable(),
        partition: z.string().nullable(),
        gpus: z.number(),
        started_at: z.string().nullable(),
      }),
    )
    .catch([])
    .parse(s.foreignJobs);
  const reading = readSlurmNode(parseSlurmNodeState(s.state), s.reason);
  return {
    state: s.state,
    reason: s.reason,
    condition: reading.condition,
    drainedByUs: reading.drainedByUs,
    reasonBy: s.reasonBy,
    reasonAt: s.reasonAt?.toISOString() ?? null,
    partitions: s.partitions,
    cpus: s.cpus,
    cpusAlloc: s.cpusAlloc,
    memoryMb: s.memoryMb,
    memoryAllocMb: s.memoryAllocMb,
    gres: s.gres,
    foreignGpus: s.foreignGpus,
    foreignUnplaced: s.foreignUnplaced,
    foreign,
    mirroredStatus: s.mirroredStatus,
    stateSince: s.stateSince.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

const conditionOf = (state: string, reason: string | null) => {
  const r = readSlurmNode(parseSlurmNodeState(state), reason);
  return { slurmCondition: r.condition, slurmDrainedByUs: r.drainedByUs };
};

/** Every Slurm cluster with its partitions and its nodes' Slurm states, for the fleet floor and the cluster page. */
export async function slurmClustersOverview(clusterId?: string) {
  const clusters = await db().cluster.findMany({
    where: { kind: "slurm", ...(clusterId ? { id: clusterId } : {}) },
    select: { id: true, name: true },
    orderBy: { name: "asc" },
  });
  if (clusters.length === 0) return [];
  const ids = clusters.map((c) => c.id);
  const [pictures, nodes] = await Promise.all([
    db().slurmCluster.findMany({ where: { clusterId: { in: ids } } }),
    db().node.findMany({
      where: { clusterId: { in: ids } },
      select: {
        id: true,
        clusterId: true,
        hostname: true,
        status: true,
        slurm: { select: { state: true, reason: true, partitions: true, foreignGpus: true } },
        gpus: { where: { status: { not: "missing" } }, select: { allocatedJobId: true, foreignHolder: true, status: true } },
      },
      orderBy: { hostname: "asc" },
    }),
  ]);
  return clusters.map((c) => {
    const picture = pictures.find((p) => p.clusterId === c.id);
    const own = nodes.filter((n) => n.clusterId === c.id);
    const partitions = partitionsOf(picture?.partitions).map((p) => {
      const members = own.filter((n) => n.slurm?.partitions.includes(p.name));
      const gpus = members.flatMap((n) => n.gpus);
      return {
        ...p,
        mirrored: members.length,
        gpusMirrored: gpus.length,
        gpusGpuforge: gpus.filter((g) => g.allocatedJobId).length,
        gpusForeign: gpus.filter((g) => g.foreignHolder).length,
        nodesOut: members.filter((n) => n.status !== "available").length,
      };
    });
    return {
      id: c.id,
      name: c.name,
      slurmClusterName: picture?.slurmClusterName ?? null,
      slurmVersion: picture?.slurmVersion ?? null,
      containerMode: picture?.containerMode ?? null,
      bridgeHost: picture?.bridgeHost ?? null,
      reportedAt: picture?.reportedAt.toISOString() ?? null,
      partitions,
      nodes: own.map((n) => ({
        id: n.id,
        hostname: n.hostname,
        status: n.status,
        slurmState: n.slurm?.state ?? null,
        slurmReason: n.slurm?.reason ?? null,
        ...(n.slurm ? conditionOf(n.slurm.state, n.slurm.reason) : { slurmCondition: null, slurmDrainedByUs: false }),
        partitions: n.slurm?.partitions ?? [],
        gpus: n.gpus.length,
        gpusGpuforge: n.gpus.filter((g) => g.allocatedJobId).length,
        gpusForeign: n.gpus.filter((g) => g.foreignHolder).length,
      })),
    };
  });
}
