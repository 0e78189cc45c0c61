// One look at Slurm: its nodes, partitions, GPUs in use and jobs, read with its tools in one pass
// (lib: ./parse.ts). A tool that fails, or whose answer cannot be read at all, fails the snapshot:
// the bridge then reports nothing for this cycle, so a broken or half-printed answer never changes
// any state. Records that cannot be read are skipped and named; a job whose line was skipped makes
// the snapshot "incomplete" for jobs, and the bridge then concludes nothing from a job's absence.
import type { SlurmTools } from "./cli";
import {
  parseConfig,
  parseGresUsed,
  parseNodes,
  parsePartitions,
  parseQueue,
  SQUEUE_FORMAT,
  type QueueJob,
  type SlurmConfig,
  type SlurmNode,
  type SlurmPartitionInfo,
} from "./parse";
import type { GpuGres } from "../../../lib/slurm/gres";

export interface Snapshot {
  at: number;
  nodes: SlurmNode[];
  partitions: SlurmPartitionInfo[];
  gresUsed: Map<string, GpuGres[]>;
  jobs: QueueJob[];
  /** every job line was read: a job missing from `jobs` is not in Slurm's queue */
  jobsComplete: boolean;
  skipped: string[];
}

export type SnapshotResult = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

export async function readConfig(tools: SlurmTools): Promise<SlurmConfig> {
  return parseConfig((await tools.run("scontrol", ["show", "config"])).stdout);
}

export async function takeSnapshot(tools: SlurmTools, now = Date.now()): Promise<SnapshotResult> {
  let out: string[];
  try {
    out = (
      await Promise.all([
        tools.run("scontrol", ["-o", "show", "node"]),
        tools.run("scontrol", ["-o", "show", "partition"]),
        tools.run("sinfo", ["-N", "-h", "-O", "NodeList:|,GresUsed:|"]),
        tools.run("squeue", ["-h", "-a", "-t", "all", "-o", SQUEUE_FORMAT]),
      ])
    ).map((r) => r.stdout);
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  const [nodeText, partText, gresText, queueText] = out as [string, string, string, string];
  const nodes = parseNodes(nodeText);
  const partitions = parsePartitions(partText);
  const gres = parseGresUsed(gresText);
  const queue = parseQueue(queueText);
  // an answer none of whose lines could be read is not an empty cluster: it is an answer we do not understand
  if (nodeText.trim() && nodes.records.length === 0)
    return { ok: false, reason: `scontrol show node: nothing readable (${nodes.skipped[0]?.reason})` };
  if (partText.trim() && partitions.records.length === 0)
    return { ok: false, reason: `scontrol show partition: nothing readable (${partitions.skipped[0]?.reason})` };
  if (queueText.trim() && queue.records.length === 0)
    return { ok: false, reason: `squeue: nothing readable (${queue.skipped[0]?.reason})` };
  if (gresText.trim() && gres.records.length === 0)
    return { ok: false, reason: `sinfo GresUsed: nothing readable (${gres.skipped[0]?.reason})` };
  const skipped = [
    ...nodes.skipped.map((s) => `scontrol show node line ${s.line}: ${s.reason}`),
    ...partitions.skipped.map((s) => `scontrol show partition line ${s.line}: ${s.reason}`),
    ...gres.skipped.map((s) => `sinfo line ${s.line}: ${s.reason}`),
    ...queue.skipped.map((s) => `squeue line ${s.line}: ${s.reason}`),
  ];
  return {
    ok: true,
    snapshot: {
      at: now,
      nodes: nodes.records,
      partitions: partitions.records,
      gresUsed: new Map(gres.records.map((r) => [r.node, r.used])),
      jobs: queue.records,
      jobsComplete: queue.skipped.length === 0,
      skipped,
    },
  };
}
