import { descendsFrom, readProcesses } from "../../scripts/lib/proc-stats";

// CPU time by role, read from /proc (Linux): where a benchmark phase's cycles went — the
// database, the server under test, or the load generator itself. On two shared cores these add
// up to the wall clock, so a phase's split says which side to make cheaper.

export type Role = "database" | "app" | "ingest_server" | "load_generator";

function classify(pid: number, comm: string, cmdline: string): Role | null {
  if (pid === process.pid) return "load_generator";
  if (comm === "postgres") return "database";
  if (cmdline.includes("ingest-server")) return "ingest_server";
  if (comm.startsWith("next-server") || cmdline.includes("next start") || cmdline.includes("next-server")) return "app";
  return null;
}

/** Cumulative CPU seconds of this process and its descendants that have a role, by pid. */
function cpuByPid(): Map<number, { role: Role; seconds: number }> | null {
  const procs = readProcesses();
  if (!procs) return null;
  // only what this benchmark started: another server on the machine is not the system under test
  const out = new Map<number, { role: Role; seconds: number }>();
  for (const p of procs.values()) {
    const role = classify(p.pid, p.comm, p.cmdline);
    if (role && descendsFrom(procs, p.pid, process.pid)) out.set(p.pid, { role, seconds: p.cpuSeconds });
  }
  return out;
}

/**
 * Starts counting; `since()` returns the CPU seconds each role spent from then on. Take it before
 * closing connections: a process that has exited can no longer be read, and its time is lost.
 */
export function cpuMark(): { since: () => Record<Role, number> | null } {
  const before = cpuByPid();
  return {
    since() {
      const after = cpuByPid();
      if (!before || !after) return null;
      const total: Record<Role, number> = { database: 0, app: 0, ingest_server: 0, load_generator: 0 };
      for (const [pid, { role, seconds }] of after) total[role] += seconds - (before.get(pid)?.seconds ?? 0);
      for (const r of Object.keys(total) as Role[]) total[r] = Math.round(total[r] * 100) / 100;
      return total;
    },
  };
}
