// Slurm's tools' output, read. Pure (no I/O). The bridge asks each tool for forms meant for
// programs (scontrol -o: one record a line of Key=Value; squeue -o and sinfo -O with a delimiter,
// the one free-text field last; SLURM_TIME_FORMAT=%s: times as epoch seconds) and reads them by
// name, never by position, so fields added, moved or renamed by a newer Slurm are ignored or found
// again. A record that cannot be read is skipped with the reason, never guessed at, and a tool whose
// whole answer is unreadable fails the cycle (nothing is reported from it).

import { parseGpuGres, type GpuGres } from "../../../lib/slurm/gres";
import { expandHostlist, HostlistError } from "../../../lib/slurm/hostlist";

interface Skipped {
  line: number;
  reason: string;
}
export interface Parsed<T> {
  records: T[];
  skipped: Skipped[];
}

/** A key as scontrol prints them: `NodeName`, `CPUs/Task`, `AllocNode:Sid`, `MCS_label`. */
const KEY = /(^|\s)([A-Za-z][A-Za-z0-9_:/.]*)=/g;

/**
 * One `scontrol -o` line as (key, value) pairs in order, repeated keys kept (`-d` prints a Nodes=,
 * CPU_IDs=, GRES= group per node). A value runs to the next ` Key=`; a node's Reason runs to its
 * `[user@time]` suffix, so a reason that contains ` x=y` stays whole.
 */
export function tokenize(line: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const starts: Array<{ key: string; at: number; value: number }> = [];
  for (const m of line.matchAll(KEY)) starts.push({ key: m[2]!, at: m.index! + m[1]!.length, value: m.index! + m[0].length });
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i]!;
    let end = i + 1 < starts.length ? starts[i + 1]!.at : line.length;
    if (s.key === "Reason") {
      // Reason=<text> [<user>@<time>]: the text may hold anything, the suffix closes it
      const close = /\s\[[^\]\s@]*@[^\]\s]*\]/.exec(line.slice(s.value));
      if (close) {
        end = s.value + close.index + close[0].length;
        while (i + 1 < starts.length && starts[i + 1]!.at < end) i++;
      }
    }
    out.push([s.key, line.slice(s.value, end).trim()]);
  }
  return out;
}

/** The first value of each key (what a record's plain fields are). */
export function fieldsOf(line: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of tokenize(line)) if (!m.has(k)) m.set(k, v);
  return m;
}

const NONE = new Set(["", "(null)", "None", "N/A", "n/a", "Unknown", "NONE", "n/s"]);
const present = (v: string | undefined): string | null => (v === undefined || NONE.has(v.trim()) ? null : v.trim());

/** A time as Slurm prints it: epoch seconds (SLURM_TIME_FORMAT=%s) or its local ISO form; null for none. */
export function slurmTime(v: string | undefined): Date | null {
  const t = present(v);
  if (!t) return null;
  if (/^\d{9,11}$/.test(t)) return new Date(Number(t) * 1000);
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(t)) {
    const d = new Date(t); // no zone: the controller's local time, read as this host's
    return Number.isNaN(d.getTime()) ? null : d;
  }
  return null;
}

/** A duration as Slurm prints limits: `UNLIMITED`, `2-00:00:00`, `12:00:00`, `30:00`, or minutes. Null: unlimited. */
export function slurmDuration(v: string | undefined): number | null | undefined {
  const t = (v ?? "").trim();
  if (/^(UNLIMITED|INFINITE|NONE)$/i.test(t)) return null;
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(t);
  if (!m) return undefined;
  const [days, a, b, c] = [
    Number(m[1] ?? 0),
    Number(m[2]),
    m[3] === undefined ? null : Number(m[3]),
    m[4] === undefined ? null : Number(m[4]),
  ];
  if (m[1] !== undefined && b === null) return days * 86_400 + a * 3600; // d-h
  if (b === null) return a * 60; // minutes
  if (c === null) return m[1] !== undefined ? days * 86_400 + a * 3600 + b * 60 : a * 60 + b; // d-h:m | m:s
  return days * 86_400 + a * 3600 + b * 60 + c;
}

const int = (v: string | undefined): number | null => {
  const t = present(v);
  if (t === null || !/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
};

export interface SlurmNode {
  name: string;
  state: string;
  reason: string | null;
  reasonBy: string | null;
  reasonAt: Date | null;
  partitions: string[];
  gres: GpuGres[];
  gresText: string | null;
  cpus: number | null;
  cpusAlloc: number | null;
  memoryMb: number | null;
  memoryAllocMb: number | null;
  os: string | null;
  version: string | null;
}

const NAME = /^[A-Za-z0-9._-]{1,253}$/;
const STATE = /^[A-Za-z_+*~#!%$@^-]{1,120}$/;

/** `scontrol -o show node`: every node, one a line. */
export function parseNodes(text: string): Parsed<SlurmNode> {
  const records: SlurmNode[] = [];
  const skipped: Skipped[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const f = fieldsOf(line);
    const name = f.get("NodeName");
    const state = f.get("State");
    if (!name || !NAME.test(name)) return skipped.push({ line: i + 1, reason: `no valid NodeName in ${line.slice(0, 80)}` });
    if (!state || !STATE.test(state)) return skipped.push({ line: i + 1, reason: `node ${name}: no valid State` });
    const rawReason = present(f.get("Reason"));
    const suffix = rawReason ? /^(.*?)\s*\[([^\]@]*)@([^\]]*)\]$/.exec(rawReason) : null;
    records.push({
      name,
      state,
      reason: suffix ? suffix[1]!.trim() || null : rawReason,
      reasonBy: suffix ? suffix[2]!.trim() || null : null,
      reasonAt: suffix ? slurmTime(suffix[3]) : null,
      partitions: (present(f.get("Partitions")) ?? "").split(",").filter((p) => NAME.test(p)),
      gres: parseGpuGres(f.get("Gres")),
      gresText: present(f.get("Gres")),
      cpus: int(f.get("CPUTot")) ?? int(f.get("CPUEfctv")),
      cpusAlloc: int(f.get("CPUAlloc")),
      memoryMb: int(f.get("RealMemory")),
      memoryAllocMb: int(f.get("AllocMem")),
      os: present(f.get("OS"))?.slice(0, 200) ?? null,
      version: present(f.get("Version")),
    });
  });
  return { records, skipped };
}

export interface SlurmPartitionInfo {
  name: string;
  state: string;
  isDefault: boolean;
  nodesText: string;
  nodes: string[];
  maxTimeS: number | null;
  cpus: number | null;
}

/** `scontrol -o show partition`. */
export function parsePartitions(text: string): Parsed<SlurmPartitionInfo> {
  const records: SlurmPartitionInfo[] = [];
  const skipped: Skipped[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const f = fieldsOf(line);
    const name = f.get("PartitionName");
    if (!name || !/^[A-Za-z0-9._-]{1,64}$/.test(name)) return skipped.push({ line: i + 1, reason: "no valid PartitionName" });
    const maxTime = slurmDuration(f.get("MaxTime"));
    if (maxTime === undefined) return skipped.push({ line: i + 1, reason: `partition ${name}: unreadable MaxTime ${f.get("MaxTime")}` });
    const nodesText = present(f.get("Nodes")) ?? "";
    let nodes: string[];
    try {
      nodes = expandHostlist(nodesText);
    } catch (e) {
      return skipped.push({ line: i + 1, reason: `partition ${name}: ${(e as HostlistError).message}` });
    }
    records.push({
      name,
      state: (present(f.get("State")) ?? "UNKNOWN").toUpperCase(),
      isDefault: (f.get("Default") ?? "").toUpperCase() === "YES",
      nodesText,
      nodes,
      maxTimeS: maxTime,
      cpus: int(f.get("TotalCPUs")),
    });
  });
  return { records, skipped };
}

/** `sinfo -N -h -O NodeList:|,GresUsed:|`: the GPUs in use on each node (a node once per partition). */
export function parseGresUsed(text: string): Parsed<{ node: string; used: GpuGres[] }> {
  const seen = new Map<string, GpuGres[]>();
  const skipped: Skipped[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const [node, used] = line.split("|");
    if (!node || !NAME.test(node.trim()) || used === undefined)
      return skipped.push({ line: i + 1, reason: `unreadable: ${line.slice(0, 80)}` });
    seen.set(node.trim(), parseGpuGres(used));
  });
  return { records: [...seen].map(([node, used]) => ({ node, used })), skipped };
}

/** The squeue format the bridge asks for: the comment, free text, last. */
export const SQUEUE_FORMAT = "%A|%i|%T|%u|%P|%D|%N|%b|%S|%e|%V|%r|%k";
const SQUEUE_FIELDS = 13;

export interface QueueJob {
  /** Slurm's numeric id (a heterogeneous job's components have their own) */
  id: string;
  /** `4812`, or `4812+1` for component 1 of heterogeneous job 4812 */
  display: string;
  /** the heterogeneous job's leader (this job itself otherwise) */
  leader: string;
  state: string;
  user: string | null;
  partition: string | null;
  nodeCount: number | null;
  nodes: string[];
  nodesText: string | null;
  tresPerNode: GpuGres[];
  startedAt: Date | null;
  endsAt: Date | null;
  submittedAt: Date | null;
  reason: string | null;
  comment: string | null;
}

/** `squeue -h -a -t all -o SQUEUE_FORMAT`. */
export function parseQueue(text: string): Parsed<QueueJob> {
  const records: QueueJob[] = [];
  const skipped: Skipped[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const parts = line.split("|");
    if (parts.length < SQUEUE_FIELDS) return skipped.push({ line: i + 1, reason: `${parts.length} fields, not ${SQUEUE_FIELDS}` });
    const [id, display, state, user, partition, count, nodes, tres, start, end, submit, reason] = parts.map((p) => p.trim());
    const comment = parts.slice(SQUEUE_FIELDS - 1).join("|");
    if (!/^\d{1,12}$/.test(id!)) return skipped.push({ line: i + 1, reason: `not a job id: ${id}` });
    const het = /^(\d{1,12})\+(\d+)$/.exec(display!);
    if (!het && !/^\d{1,12}(_\d+|_\[.*\])?$/.test(display!))
      return skipped.push({ line: i + 1, reason: `job ${id}: unreadable id ${display}` });
    if (!/^[A-Z_]{2,32}/.test(state!)) return skipped.push({ line: i + 1, reason: `job ${id}: unreadable state ${state}` });
    let hosts: string[];
    try {
      hosts = expandHostlist(nodes ?? "");
    } catch (e) {
      return skipped.push({ line: i + 1, reason: `job ${id}: ${(e as Error).message}` });
    }
    records.push({
      id: id!,
      display: display!,
      leader: het ? het[1]! : id!,
      state: state!.split(/\s/)[0]!,
      user: present(user),
      partition: present(partition),
      nodeCount: int(count),
      nodes: hosts,
      nodesText: present(nodes),
      tresPerNode: parseGpuGres(tres),
      startedAt: slurmTime(start),
      endsAt: slurmTime(end),
      submittedAt: slurmTime(submit),
      reason: present(reason),
      comment: present(comment),
    });
  });
  return { records, skipped };
}

export interface JobDetail {
  id: string;
  state: string;
  reason: string | null;
  exitCode: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  submittedAt: Date | null;
  nodesText: string | null;
  user: string | null;
  comment: string | null;
  stdout: string | null;
  stderr: string | null;
  /** heterogeneous components (the leader's own line first) */
  components: number;
}

/** `scontrol -o show job ID`: the job (a heterogeneous job prints a line per component). */
export function parseJobDetail(text: string): JobDetail | null {
  const lines = text.split("\n").filter((l) => l.trim());
  if (lines.length === 0) return null;
  const records = lines.map(fieldsOf);
  const first = records[0]!;
  const id = first.get("JobId");
  const state = first.get("JobState");
  if (!id || !/^\d{1,12}$/.test(id) || !state || !/^[A-Z_]{2,32}$/.test(state)) return null;
  // a heterogeneous job ends when all its components have: the worst state and exit code of them
  const states = records.map((r) => r.get("JobState") ?? "");
  const exitCodes = records.map((r) => r.get("ExitCode") ?? "");
  const failed = records.findIndex((r) => r.get("JobState") !== "COMPLETED");
  const decisive = failed >= 0 ? failed : 0;
  const ends = records.map((r) => slurmTime(r.get("EndTime"))).filter((d): d is Date => d !== null);
  const starts = records.map((r) => slurmTime(r.get("StartTime"))).filter((d): d is Date => d !== null);
  return {
    id,
    state: states[decisive]!,
    reason: present(records[decisive]!.get("Reason")),
    exitCode: /^\d+:\d+$/.test(exitCodes[decisive]!) ? exitCodes[decisive]! : null,
    startedAt: starts.length ? new Date(Math.min(...starts.map((d) => d.getTime()))) : null,
    endedAt: ends.length === records.length && ends.length ? new Date(Math.max(...ends.map((d) => d.getTime()))) : null,
    submittedAt: slurmTime(first.get("SubmitTime")),
    nodesText:
      present(
        records
          .map((r) => r.get("NodeList") ?? "")
          .join(",")
          .replace(/^,+|,+$/g, ""),
      ) ?? null,
    user: present(first.get("UserId"))?.replace(/\(\d+\)$/, "") ?? null,
    comment: present(first.get("Comment")),
    stdout: present(first.get("StdOut")),
    stderr: present(first.get("StdErr")),
    components: records.length,
  };
}

export interface SlurmConfig {
  clusterName: string | null;
  version: string | null;
  minJobAgeS: number | null;
  slurmdTimeoutS: number | null;
  selectType: string | null;
  accountingStorage: string | null;
}

/** `scontrol show config`: `Key = Value` lines. */
export function parseConfig(text: string): SlurmConfig {
  const m = new Map<string, string>();
  for (const line of text.split("\n")) {
    const r = /^([A-Za-z][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line.trim());
    if (r) m.set(r[1]!, r[2]!.trim());
  }
  const seconds = (v: string | undefined) => {
    const r = /^(\d+)\s*sec/.exec(v ?? "") ?? /^(\d+)$/.exec(v ?? "");
    return r ? Number(r[1]) : null;
  };
  return {
    clusterName: present(m.get("ClusterName")),
    version: present(m.get("SLURM_VERSION")),
    minJobAgeS: seconds(m.get("MinJobAge")),
    slurmdTimeoutS: seconds(m.get("SlurmdTimeout")),
    selectType: present(m.get("SelectType")),
    accountingStorage: present(m.get("AccountingStorageType")),
  };
}

/** What sbatch --parsable prints: `4812` or `4812;cluster`. */
export function parseSubmitted(stdout: string): string | null {
  const m = /^(\d{1,12})(?:;\S+)?\s*$/.exec(stdout.trim().split("\n").at(-1) ?? "");
  return m ? m[1]! : null;
}

/** The comment the bridge gives each placement's Slurm job: what its reports are fenced with. */
const COMMENT = /^gpuforge:([0-9a-f-]{36}):(\d{1,7}):([0-9a-f-]{36})$/;
export const placementComment = (jobId: string, attempt: number, fence: string) => `gpuforge:${jobId}:${attempt}:${fence}`;
export function readPlacementComment(comment: string | null): { jobId: string; attempt: number; fence: string } | null {
  const m = COMMENT.exec((comment ?? "").trim());
  return m ? { jobId: m[1]!, attempt: Number(m[2]), fence: m[3]! } : null;
}
