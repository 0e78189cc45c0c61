// Which of a Slurm node's GPUs GPUForge marks as held by foreign work (jobs its users submitted to
// Slurm directly), so that the scheduler never places on them. Pure (no I/O).
//
// Slurm decides which device indices a job gets; GPUForge's allocation names GPU rows. What must
// agree is the count: the node's GPUs that GPUForge's own work does not hold, less those foreign
// jobs hold, are what the scheduler may still use. A foreign job's own indices are honoured where
// GPUForge's work does not hold them; otherwise another free GPU is marked in their place. GPUs a
// node cannot take work on for want of CPUs or memory are marked too (`exhausted`).

export interface GpuSlot {
  id: string;
  index: number;
  /** held by GPUForge's own work (a job, a replica or a pod) */
  allocated: boolean;
  /** what marks it now */
  holder: string | null;
}

export interface ForeignLoad {
  /** how the console names it: `Slurm job 4812 (alice)` */
  label: string;
  gpus: number;
  /** the device indices Slurm gave it on this node, when known */
  indices?: readonly number[] | null;
}

export interface HoldPlan {
  /** every GPU whose mark changes, with its new mark (null: free again) */
  changes: Array<{ id: string; holder: string | null }>;
  /** GPUs foreign work holds that no free GPU was left to mark (GPUForge's own work holds them) */
  unplaced: number;
  held: number;
}

export const EXHAUSTED_LABEL = "Slurm: no CPUs or memory left on the node for another job";

export function planForeignHolds(gpus: readonly GpuSlot[], load: readonly ForeignLoad[], exhausted = false): HoldPlan {
  const free = gpus.filter((g) => !g.allocated).sort((a, b) => a.index - b.index);
  const want = new Map<string, string>();
  const taken = (g: GpuSlot) => want.has(g.id);
  let unplaced = 0;
  // first the indices Slurm named, then GPUs the same job already held (stable marks), then the lowest free
  for (const job of load) {
    let left = Math.max(0, Math.floor(job.gpus));
    const byIndex = new Set(job.indices ?? []);
    for (const pick of [(g: GpuSlot) => byIndex.has(g.index), (g: GpuSlot) => g.holder === job.label, () => true]) {
      for (const g of free) {
        if (left === 0) break;
        if (!taken(g) && pick(g)) {
          want.set(g.id, job.label);
          left--;
        }
      }
    }
    unplaced += left;
  }
  if (exhausted) for (const g of free) if (!taken(g)) want.set(g.id, EXHAUSTED_LABEL);
  const changes = free
    .map((g) => ({ id: g.id, holder: want.get(g.id) ?? null, before: g.holder }))
    .filter((c) => c.holder !== c.before)
    .map(({ id, holder }) => ({ id, holder }));
  return { changes, unplaced, held: want.size };
}
