// The agent's memory of every placement it has started, on disk in the state directory. A
// placement (a job attempt, a replica or a pod placement, named by its fence) is started at most once in this
// node's life: the entry is written before its container starts, and kept until the control plane
// has its exit report and has stopped assigning it. A heartbeat that still lists a finished
// placement (its report is on the way), a crash between exit and report, or a restart of the agent
// can therefore never start the same work twice.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Assignment } from "../../lib/fleet/assignments";

/** How a placement is named in the agent's memory and in its reports. */
export function placementKey(a: Assignment): string {
  if (a.kind === "job") return `job:${a.job_id}:${a.attempt}:${a.fence}`;
  if (a.kind === "pod") return `pod:${a.pod_id}:${a.attempt}:${a.fence}`;
  return `replica:${a.replica_id}:${a.attempt}:${a.fence}`;
}

export type PlacementState = "running" | "finished" | "stopped";

export interface PlacementEntry {
  key: string;
  kind: Assignment["kind"];
  /** the job, replica or pod id */
  id: string;
  attempt: number;
  fence: string;
  state: PlacementState;
  /** the container's name on this node (absent for work that runs nothing) */
  container?: string;
  startedAt: string;
  /** work that runs nothing holds its GPUs until then */
  holdUntil?: string;
  /** a pod's published ports (found again after an agent restart) */
  ports?: Array<{ container_port: number; host_port: number }>;
  endedAt?: string;
}

export class PlacementBook {
  private entries = new Map<string, PlacementEntry>();

  constructor(private readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      for (const e of JSON.parse(readFileSync(file, "utf8")) as PlacementEntry[]) this.entries.set(e.key, e);
    } catch {
      // a first start, or an unreadable file: nothing remembered
    }
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string): PlacementEntry | undefined {
    return this.entries.get(key);
  }

  list(state?: PlacementState): PlacementEntry[] {
    return [...this.entries.values()].filter((e) => !state || e.state === state);
  }

  /** Remembers a placement as started; written to disk before the caller starts anything. */
  started(entry: Omit<PlacementEntry, "state" | "startedAt"> & { startedAt?: string }): PlacementEntry {
    const e: PlacementEntry = { ...entry, state: "running", startedAt: entry.startedAt ?? new Date().toISOString() };
    this.entries.set(e.key, e);
    this.save();
    return e;
  }

  ended(key: string, state: "finished" | "stopped"): void {
    const e = this.entries.get(key);
    if (!e || e.state !== "running") return;
    e.state = state;
    e.endedAt = new Date().toISOString();
    this.save();
  }

  /**
   * Forgets placements that ended, are no longer assigned, and whose report (if any) the control
   * plane has: only then can no heartbeat hand them back.
   */
  forget(stillAssigned: ReadonlySet<string>, reportPending: (key: string) => boolean): string[] {
    const gone = [...this.entries.values()]
      .filter((e) => e.state !== "running" && !stillAssigned.has(e.key) && !reportPending(e.key))
      .map((e) => e.key);
    if (gone.length === 0) return [];
    for (const k of gone) this.entries.delete(k);
    this.save();
    return gone;
  }

  private save(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify([...this.entries.values()]));
    renameSync(tmp, this.file); // atomic: a crash leaves the old book or the new, never half of one
  }
}
