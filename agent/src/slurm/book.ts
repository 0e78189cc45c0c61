// The bridge's memory of every placement it has taken on, on disk in its state directory: the
// Slurm bridge's counterpart of the node agent's placement book. A placement is submitted to Slurm
// at most once in the book's life: its entry is written before sbatch is called (phase
// `submitting`), so a bridge that crashes there finds its job again by the comment on it, or, when
// Slurm has no such job, reports the placement interrupted rather than submitting it again.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

export type Phase =
  /** taken on; sbatch not called yet (safe to try again) */
  | "preparing"
  /** sbatch called; its answer not recorded yet */
  | "submitting"
  /** Slurm has it under slurmJobId */
  | "submitted"
  /** Slurm ended it, and its outcome is queued for the control plane */
  | "ended";

type CancelReason = "unassigned" | "pending_timeout" | "lease" | "stale";

export interface SlurmPlacement {
  key: string;
  jobId: string;
  attempt: number;
  fence: string;
  phase: Phase;
  slurmJobId?: string;
  /** GPUs per node, as GPUForge placed them (foreign load is what Slurm holds beyond these) */
  gpusByNode: Record<string, number>;
  logsPath: string;
  stdout?: string;
  stderr?: string;
  offsets: { stdout: number; stderr: number };
  lastState?: string;
  lastReason?: string | null;
  startedReported?: boolean;
  pendingSince?: string;
  /** why the bridge cancelled it (an unassigned placement's end is not reported) */
  cancel?: CancelReason;
  cancelRequested?: boolean;
  takenAt: string;
  submittingSince?: string;
  endedAt?: string;
}

export class SlurmBook {
  private entries = new Map<string, SlurmPlacement>();

  constructor(private readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      for (const e of JSON.parse(readFileSync(file, "utf8")) as SlurmPlacement[])
        if (e?.key && e.jobId && e.fence) this.entries.set(e.key, e);
    } catch {
      // a first start, or an unreadable file: nothing remembered (Slurm's comments are the fallback)
    }
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string): SlurmPlacement | undefined {
    return this.entries.get(key);
  }

  list(...phases: Phase[]): SlurmPlacement[] {
    return [...this.entries.values()].filter((e) => phases.length === 0 || phases.includes(e.phase));
  }

  bySlurmId(id: string): SlurmPlacement | undefined {
    for (const e of this.entries.values()) if (e.slurmJobId === id) return e;
    return undefined;
  }

  add(entry: SlurmPlacement): SlurmPlacement {
    this.entries.set(entry.key, entry);
    this.save();
    return entry;
  }

  update(key: string, patch: Partial<SlurmPlacement>): SlurmPlacement | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    Object.assign(e, patch);
    this.save();
    return e;
  }

  drop(key: string): void {
    if (this.entries.delete(key)) this.save();
  }

  /** Forgets ended placements no longer assigned whose reports and logs the control plane has. */
  forget(stillAssigned: ReadonlySet<string>, pending: (key: string) => boolean): string[] {
    const gone = [...this.entries.values()]
      .filter((e) => e.phase === "ended" && !stillAssigned.has(e.key) && !pending(e.key))
      .map((e) => e.key);
    for (const k of gone) this.entries.delete(k);
    if (gone.length) this.save();
    return gone;
  }

  private save(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify([...this.entries.values()]));
    renameSync(tmp, this.file); // atomic: a crash leaves the old book or the new, never half of one
  }
}
