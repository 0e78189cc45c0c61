import Link from "next/link";
import { Badge, type Tone } from "@/components/ui/badge";
import { Card, CardHeader, EmptyState } from "@/components/ui/card";
import { formatDateTime, formatRelative } from "@/components/ui/format";
import { Table, Td, Th } from "@/components/ui/table";
import type { JobPhase } from "@/lib/slurm/job-state";
import type { SlurmCondition } from "@/lib/slurm/node-state";

// What the console shows of Slurm: its state beside ours on nodes, the partitions of each Slurm
// cluster on the fleet floor and the cluster page, and each job's Slurm job with the states Slurm
// reported. Plain serialisable props; the pages read them through lib/slurm/queries.ts.

const conditionTone: Record<SlurmCondition, Tone> = {
  up: "green",
  drained: "amber",
  maintenance: "neutral",
  reserved: "indigo",
  down: "red",
  unknown: "neutral",
};

/** A Slurm node state (MIXED+DRAIN) as a badge, coloured by what it means for GPUForge's work. */
function SlurmStateBadge({ state, condition, drainedByUs }: { state: string; condition: SlurmCondition; drainedByUs: boolean }) {
  return (
    <span title={drainedByUs ? "Drained by GPUForge" : undefined}>
      <Badge tone={drainedByUs ? "sky" : conditionTone[condition]}>{state}</Badge>
    </span>
  );
}

const jobTone = (state: string, phase: JobPhase): Tone => {
  if (state === "COMPLETED") return "green";
  if (phase === "running") return "indigo";
  if (phase === "waiting" || state === "SUBMITTING" || state === "PLACED") return "sky";
  if (phase === "ended") return "red";
  return "neutral";
};

function SlurmJobStateBadge({ state, phase }: { state: string; phase: JobPhase }) {
  return <Badge tone={jobTone(state, phase)}>{state}</Badge>;
}

export interface SlurmNodePanelProps {
  state: string;
  reason: string | null;
  /** what Slurm's state means here, and whether the drain is GPUForge's own (lib/slurm/node-state.ts) */
  condition: SlurmCondition;
  drainedByUs: boolean;
  reasonBy: string | null;
  reasonAt: string | null;
  partitions: string[];
  cpus: number | null;
  cpusAlloc: number | null;
  memoryMb: number | null;
  memoryAllocMb: number | null;
  gres: string | null;
  foreignGpus: number;
  foreignUnplaced: number;
  foreign: Array<{ slurm_job_id: string | null; user: string | null; partition: string | null; gpus: number; started_at: string | null }>;
  mirroredStatus: string | null;
  stateSince: string;
  updatedAt: string;
}

/** The node page's Slurm card: Slurm's own state and reason beside ours, and the load it reports. */
export function SlurmNodePanel({ slurm, status }: { slurm: SlurmNodePanelProps; status: string }) {
  const reading = { condition: slurm.condition, drainedByUs: slurm.drainedByUs };
  const note = reading.drainedByUs
    ? "Drained in Slurm by GPUForge; returning the node to service here resumes it there."
    : reading.condition === "drained"
      ? "Drained by Slurm's admins: GPUForge takes no new work here until they resume it in Slurm (scontrol update state=resume), and never lifts their drain."
      : reading.condition === "down"
        ? "Slurm has this node down: it is offline here, and Slurm decides how the jobs on it end."
        : reading.condition === "maintenance" || reading.condition === "reserved"
          ? "A Slurm reservation holds this node: only that reservation's jobs start here."
          : slurm.mirroredStatus
            ? `Held ${slurm.mirroredStatus} by what Slurm reported.`
            : `GPUForge's state: ${status}.`;
  return (
    <Card className="mt-6" aria-labelledby="slurm-node-title">
      <div className="flex flex-wrap items-start justify-between gap-3 border-b border-slate-100 px-5 py-4">
        <div>
          <h2 id="slurm-node-title" className="text-sm font-semibold text-slate-900">
            Slurm
          </h2>
          <p className="mt-0.5 text-sm text-slate-500">{note}</p>
        </div>
        <div className="flex items-center gap-2 text-sm" data-testid="slurm-state">
          <span className="text-slate-500">Slurm state</span>
          <SlurmStateBadge state={slurm.state} condition={slurm.condition} drainedByUs={slurm.drainedByUs} />
        </div>
      </div>
      <dl className="grid gap-x-6 gap-y-3 px-5 py-4 text-sm sm:grid-cols-2 lg:grid-cols-4">
        <div className="sm:col-span-2">
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Reason</dt>
          <dd className="mt-1 text-slate-800" data-testid="slurm-reason">
            {slurm.reason ?? "—"}
            {slurm.reason && (slurm.reasonBy || slurm.reasonAt) ? (
              <span className="text-slate-500">
                {" "}
                — {slurm.reasonBy ?? "?"}
                {slurm.reasonAt ? `, ${formatDateTime(slurm.reasonAt)}` : ""}
              </span>
            ) : null}
          </dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Partitions</dt>
          <dd className="mt-1 text-slate-800">{slurm.partitions.length ? slurm.partitions.join(", ") : "—"}</dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">In this state</dt>
          <dd className="mt-1 text-slate-800">since {formatRelative(slurm.stateSince)}</dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">CPUs allocated</dt>
          <dd className="mt-1 tabular-nums text-slate-800">
            {slurm.cpusAlloc ?? "?"} of {slurm.cpus ?? "?"}
          </dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Memory allocated</dt>
          <dd className="mt-1 tabular-nums text-slate-800">
            {slurm.memoryAllocMb === null ? "?" : `${Math.round(slurm.memoryAllocMb / 1024)} GiB`} of{" "}
            {slurm.memoryMb === null ? "?" : `${Math.round(slurm.memoryMb / 1024)} GiB`}
          </dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">GRES</dt>
          <dd className="mt-1 font-mono text-xs text-slate-800">{slurm.gres ?? "—"}</dd>
        </div>
        <div>
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">Reported</dt>
          <dd className="mt-1 text-slate-800">{formatRelative(slurm.updatedAt)}</dd>
        </div>
      </dl>
      <div className="border-t border-slate-100 px-5 py-3">
        <h3 className="text-xs font-semibold uppercase tracking-wide text-slate-500">Foreign load</h3>
        {slurm.foreign.length === 0 ? (
          <p className="mt-1 text-sm text-slate-600">No job submitted to Slurm directly holds GPUs here.</p>
        ) : (
          <ul className="mt-1 space-y-1 text-sm text-slate-700" data-testid="foreign-load">
            {slurm.foreign.map((f, i) => (
              <li key={`${f.slurm_job_id ?? "anon"}-${i}`}>
                <span className="font-medium">{f.slurm_job_id ? `Slurm job ${f.slurm_job_id}` : "Jobs outside GPUForge"}</span>
                {f.user ? ` by ${f.user}` : ""}
                {f.partition ? ` in ${f.partition}` : ""}: {f.gpus} GPU{f.gpus === 1 ? "" : "s"}
                {f.started_at ? `, running since ${formatDateTime(f.started_at)}` : ""}
              </li>
            ))}
          </ul>
        )}
        {slurm.foreignUnplaced > 0 ? (
          <p className="mt-1 text-sm text-amber-800">
            Slurm counts {slurm.foreignUnplaced} more GPU{slurm.foreignUnplaced === 1 ? "" : "s"} in use than GPUForge has free here.
          </p>
        ) : null}
      </div>
    </Card>
  );
}

export interface SlurmClusterCard {
  id: string;
  name: string;
  slurmClusterName: string | null;
  slurmVersion: string | null;
  containerMode: string | null;
  bridgeHost: string | null;
  reportedAt: string | null;
  partitions: Array<{
    name: string;
    state: string;
    default: boolean;
    nodes: string;
    node_count: number;
    max_time_s: number | null;
    gpus: number;
    mirrored: number;
    gpusGpuforge: number;
    gpusForeign: number;
    nodesOut: number;
  }>;
  nodes: Array<{
    id: string;
    hostname: string;
    status: string;
    slurmState: string | null;
    slurmReason: string | null;
    slurmCondition: SlurmCondition | null;
    slurmDrainedByUs: boolean;
    gpus: number;
    gpusGpuforge: number;
    gpusForeign: number;
  }>;
}

const formatLimit = (s: number | null) => {
  if (s === null) return "unlimited";
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  return `${Math.round(s / 60)} min`;
};

function BridgeLine({ c }: { c: SlurmClusterCard }) {
  if (!c.reportedAt) return <span className="text-amber-800">Its Slurm bridge has not reported yet.</span>;
  return (
    <span>
      Slurm {c.slurmVersion} · cluster {c.slurmClusterName} · bridge on {c.bridgeHost ?? "?"}, last report {formatRelative(c.reportedAt)} ·
      images through{" "}
      {c.containerMode === "oci" ? "Slurm's --container" : c.containerMode === "none" ? "nothing (no container support)" : c.containerMode}
    </span>
  );
}

/** A Slurm cluster's partitions: what Slurm says of each, and how its GPUs are used. */
function SlurmPartitionsTable({ cluster }: { cluster: SlurmClusterCard }) {
  if (cluster.partitions.length === 0) return <EmptyState title="No partitions reported yet" />;
  return (
    <Table caption={`Partitions of ${cluster.name}`}>
      <thead className="bg-slate-50">
        <tr>
          <Th>Partition</Th>
          <Th>State</Th>
          <Th>Nodes</Th>
          <Th>Time limit</Th>
          <Th className="text-right">GPUs</Th>
          <Th className="text-right">GPUForge</Th>
          <Th className="text-right">Foreign</Th>
          <Th className="text-right">Nodes out</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {cluster.partitions.map((p) => (
          <tr key={p.name}>
            <Td>
              <span className="font-medium text-slate-900">{p.name}</span>
              {p.default ? <span className="ml-2 text-xs text-slate-500">default</span> : null}
            </Td>
            <Td>
              <Badge tone={p.state === "UP" ? "green" : "amber"}>{p.state}</Badge>
            </Td>
            <Td className="font-mono text-xs">
              {p.nodes} ({p.node_count})
            </Td>
            <Td>{formatLimit(p.max_time_s)}</Td>
            <Td className="text-right tabular-nums">{p.gpus}</Td>
            <Td className="text-right tabular-nums">{p.gpusGpuforge}</Td>
            <Td className="text-right tabular-nums">{p.gpusForeign}</Td>
            <Td className="text-right tabular-nums">{p.nodesOut}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** The fleet floor's Slurm clusters: each with its partitions, linked to its page. */
export function SlurmClustersCard({ clusters }: { clusters: SlurmClusterCard[] }) {
  if (clusters.length === 0) return null;
  return (
    <Card className="mt-6" aria-labelledby="slurm-clusters-title">
      <div className="border-b border-slate-100 px-5 py-4">
        <h2 id="slurm-clusters-title" className="text-sm font-semibold text-slate-900">
          Slurm clusters
        </h2>
        <p className="mt-0.5 text-sm text-slate-500">
          Run by their own Slurm through a bridge: GPUForge places, Slurm runs. Foreign GPUs are held by jobs submitted to Slurm directly.
        </p>
      </div>
      <ul className="divide-y divide-slate-100">
        {clusters.map((c) => (
          <li key={c.id} className="px-5 py-4">
            <div className="flex flex-wrap items-baseline justify-between gap-2">
              <Link href={`/admin/clusters/${c.id}`} className="font-medium text-indigo-700 hover:underline">
                {c.name}
              </Link>
              <p className="text-xs text-slate-500">
                <BridgeLine c={c} />
              </p>
            </div>
            <ul className="mt-3 flex flex-wrap gap-2" aria-label={`Partitions of ${c.name}`}>
              {c.partitions.map((p) => (
                <li
                  key={p.name}
                  className="rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-xs text-slate-700"
                  title={`${p.nodes}: ${p.node_count} nodes, time limit ${formatLimit(p.max_time_s)}`}
                >
                  <span className="font-semibold text-slate-900">{p.name}</span>
                  {p.default ? <span className="text-slate-500"> (default)</span> : null}
                  <span className={p.state === "UP" ? "text-emerald-700" : "text-amber-800"}> · {p.state}</span>
                  <span className="block tabular-nums">
                    {p.gpus} GPUs · {p.gpusGpuforge} GPUForge · {p.gpusForeign} foreign · {p.node_count} nodes
                    {p.nodesOut ? `, ${p.nodesOut} out` : ""}
                  </span>
                </li>
              ))}
              {c.partitions.length === 0 ? <li className="text-sm text-slate-500">No partitions reported yet.</li> : null}
            </ul>
          </li>
        ))}
      </ul>
    </Card>
  );
}

/** The cluster page's Slurm section: the bridge, the partitions, and each node's Slurm state beside ours. */
export function SlurmClusterSection({ cluster }: { cluster: SlurmClusterCard }) {
  return (
    <>
      <Card className="mt-6">
        <CardHeader title="Slurm" description="Partitions as this cluster's Slurm bridge last reported them." />
        <p className="px-5 pt-3 text-sm text-slate-600">
          <BridgeLine c={cluster} />
        </p>
        <div className="pt-2">
          <SlurmPartitionsTable cluster={cluster} />
        </div>
      </Card>
      <Card className="mt-6">
        <CardHeader title="Slurm nodes" description="Each node's state in Slurm beside its state here." />
        {cluster.nodes.length === 0 ? (
          <EmptyState title="No Slurm nodes mirrored yet">Start the Slurm bridge with this cluster&apos;s agent key.</EmptyState>
        ) : (
          <Table caption="Slurm nodes">
            <thead className="bg-slate-50">
              <tr>
                <Th>Node</Th>
                <Th>GPUForge</Th>
                <Th>Slurm</Th>
                <Th>Slurm&apos;s reason</Th>
                <Th className="text-right">GPUs</Th>
                <Th className="text-right">GPUForge</Th>
                <Th className="text-right">Foreign</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {cluster.nodes.map((n) => (
                <tr key={n.id}>
                  <Td>
                    <Link className="font-medium text-indigo-700 hover:underline" href={`/admin/nodes/${n.id}`}>
                      {n.hostname}
                    </Link>
                  </Td>
                  <Td>
                    <Badge tone={n.status === "available" ? "green" : n.status === "quarantined" ? "red" : "amber"}>{n.status}</Badge>
                  </Td>
                  <Td>
                    {n.slurmState && n.slurmCondition ? (
                      <SlurmStateBadge state={n.slurmState} condition={n.slurmCondition} drainedByUs={n.slurmDrainedByUs} />
                    ) : (
                      "—"
                    )}
                  </Td>
                  <Td wrap className="max-w-sm text-xs">
                    {n.slurmReason ?? "—"}
                  </Td>
                  <Td className="text-right tabular-nums">{n.gpus}</Td>
                  <Td className="text-right tabular-nums">{n.gpusGpuforge}</Td>
                  <Td className="text-right tabular-nums">{n.gpusForeign}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </>
  );
}

export interface SlurmJobAttempt {
  attempt: number;
  slurm_job_id: string | null;
  account: string | null;
  partition: string | null;
  state: string;
  reason: string | null;
  nodes: string | null;
  exit_code: string | null;
  submitted_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  phase: JobPhase;
  history: Array<{ state: string; reason: string | null; slurm_job_id: string | null; at: string; phase: JobPhase }>;
}

/** The job page's Slurm card: each attempt's Slurm job and every state Slurm reported for it. */
export function SlurmJobCard({ attempts }: { attempts: SlurmJobAttempt[] }) {
  if (attempts.length === 0) return null;
  return (
    <Card className="mt-6" aria-labelledby="slurm-job-title">
      <div className="border-b border-slate-100 px-5 py-4">
        <h2 id="slurm-job-title" className="text-sm font-semibold text-slate-900">
          Slurm
        </h2>
        <p className="mt-0.5 text-sm text-slate-500">
          This job ran on a Slurm cluster: GPUForge placed it, Slurm ran it as the job below. Usage runs from Slurm&apos;s own start to its
          own end.
        </p>
      </div>
      <ol className="divide-y divide-slate-100">
        {attempts.map((a) => (
          <li key={a.attempt} className="px-5 py-4">
            <div className="flex flex-wrap items-center gap-x-4 gap-y-1 text-sm">
              <span className="font-medium text-slate-900">Attempt {a.attempt}</span>
              <span>
                Slurm job{" "}
                <span className="font-mono" data-testid="slurm-job-id">
                  {a.slurm_job_id ?? "not submitted yet"}
                </span>
              </span>
              <SlurmJobStateBadge state={a.state} phase={a.phase} />
              {a.account ? <span className="text-slate-600">account {a.account}</span> : null}
              {a.partition ? <span className="text-slate-600">partition {a.partition}</span> : null}
              {a.nodes ? <span className="font-mono text-xs text-slate-600">{a.nodes}</span> : null}
              {a.exit_code ? <span className="text-slate-600">exit {a.exit_code}</span> : null}
            </div>
            {a.history.length ? (
              <Table caption={`Slurm states of attempt ${a.attempt}`}>
                <thead>
                  <tr>
                    <Th className="px-0">When</Th>
                    <Th>State</Th>
                    <Th>Reason</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-50">
                  {a.history.map((h, i) => (
                    <tr key={`${h.at}-${i}`}>
                      <Td className="px-0 text-xs text-slate-500">{formatDateTime(h.at)}</Td>
                      <Td>
                        <SlurmJobStateBadge state={h.state} phase={h.phase} />
                      </Td>
                      <Td wrap className="text-xs">
                        {h.state === "SUBMITTING" ? "submitted by the GPUForge Slurm bridge" : (h.reason ?? "")}
                      </Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            ) : (
              <p className="mt-2 text-sm text-slate-500">Placed; the Slurm bridge has not submitted it yet.</p>
            )}
            {a.started_at || a.ended_at ? (
              <p className="mt-2 text-xs text-slate-500">
                Slurm started it {a.started_at ? formatDateTime(a.started_at) : "—"}
                {a.ended_at ? `, ended it ${formatDateTime(a.ended_at)}` : ""}.
              </p>
            ) : null}
          </li>
        ))}
      </ol>
    </Card>
  );
}
