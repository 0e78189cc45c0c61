import { readdirSync, readFileSync } from "node:fs";

// What each process costs, read from /proc (Linux): cumulative CPU seconds and resident memory,
// with its parent and command line so callers can tell their own processes from the machine's.
// Benchmarks split CPU by role with it; the soak reports CPU and memory per process it runs.

export interface ProcSample {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
  cpuSeconds: number;
  rssBytes: number;
}

export const TICKS_PER_S = 100; // USER_HZ on every Linux this runs on
const PAGE_BYTES = 4096;

/** Every process readable now, by pid; null where there is no /proc. */
export function readProcesses(): Map<number, ProcSample> | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  const out = new Map<number, ProcSample>();
  for (const p of pids) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      // comm is in parentheses and may hold spaces; the fields after it are space-separated
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      const cmdline = readFileSync(`/proc/${p}/cmdline`, "utf8").replaceAll("\0", " ");
      // fields[1]: ppid; [11], [12]: utime, stime; [21]: rss in pages (the 4th, 14th, 15th and 24th fields of the line)
      out.set(Number(p), {
        pid: Number(p),
        ppid: Number(fields[1]),
        comm,
        cmdline,
        cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S,
        rssBytes: Number(fields[21]) * PAGE_BYTES,
      });
    } catch {
      // the process ended between the listing and the read
    }
  }
  return out;
}

/** Whether `pid` is `ancestor` or descends from it. */
export function descendsFrom(procs: Map<number, ProcSample>, pid: number, ancestor: number): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (p === ancestor) return true;
    p = procs.get(p)?.ppid ?? 0;
  }
  return false;
}

/**
 * Proportional set size: resident memory with each shared page split among the processes that
 * share it (PostgreSQL's backends all map its shared buffers; summing their RSS counts them many
 * times). Falls back to nothing where smaps_rollup cannot be read.
 */
export function readPssBytes(pid: number): number | null {
  try {
    const m = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
