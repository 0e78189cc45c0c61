import { readFileSync } from "node:fs";
import { descendsFrom, readProcesses, TICKS_PER_S } from "../../scripts/lib/proc-stats";
import { round } from "../../scripts/lib/stats";

// CPU time by role, read from /proc (Linux): where a benchmark phase's cycles went — the
// database, the server under test, or the load generator itself. On two shared cores these add
// up to the wall clock, so a phase's split says which side to make cheaper.

export type Role = "database" | "app" | "ingest_server" | "load_generator";

function classify(pid: number, comm: string, cmdline: string): Role | null {
  if (pid === process.pid) return "load_generator";
  if (comm === "postgres") return "database";
  if (cmdline.includes("ingest-server")) return "ingest_server";
  // the app runs as scripts/serve.ts (Next behind our own node:http server), or as `next start`
  if (
    cmdline.includes("scripts/serve.ts") ||
    comm.startsWith("next-server") ||
    cmdline.includes("next start") ||
    cmdline.includes("next-server")
  )
    return "app";
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
 * The whole machine's CPU seconds so far (every process, ours or not), from /proc/stat: busy
 * (user, nice, system, irq, softirq, steal) and idle (idle, iowait). Null where it cannot be read.
 */
function machineCpu(): { busy: number; idle: number } | null {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
    return { busy: (user + nice + system + irq + softirq + steal) / TICKS_PER_S, idle: (idle + iowait) / TICKS_PER_S };
  } catch {
    return null;
  }
}

/**
 * Starts counting; `since()` returns the CPU seconds each role spent from then on, and `machine()`
 * the whole machine's busy and idle seconds (so what other work on a shared machine took shows).
 * Take them before closing connections: a process that has exited can no longer be read, and its
 * time is lost.
 */
export function cpuMark(): { since: () => Record<Role, number> | null; machine: () => { busy: number; idle: number } | null } {
  const before = cpuByPid();
  const machineBefore = machineCpu();
  return {
    since() {
      const after = cpuByPid();
      if (!before || !after) return null;
      const total: Record<Role, number> = { database: 0, app: 0, ingest_server: 0, load_generator: 0 };
      for (const [pid, { role, seconds }] of after) total[role] += seconds - (before.get(pid)?.seconds ?? 0);
      for (const r of Object.keys(total) as Role[]) total[r] = Math.round(total[r] * 100) / 100;
      return total;
    },
    machine() {
      const after = machineCpu();
      if (!machineBefore || !after) return null;
      return { busy: after.busy - machineBefore.busy, idle: after.idle - machineBefore.idle };
    },
  };
}

/**
 * Cores in use on average over `seconds`: each role of ours, everything else on the machine
 * (`other`: other people's work on a shared machine) and what stayed idle. When the busy ones add
 * up to near the core count, the phase was bound by CPU, not by the code's concurrency.
 */
export function coresUsed(cpu: Record<Role, number> | null, machine: { busy: number; idle: number } | null, seconds: number) {
  if (!cpu || !machine) return null;
  const ours = Object.values(cpu).reduce((n, v) => n + v, 0);
  const cores = (s: number) => round(s / seconds, 2);
  return {
    ...(Object.fromEntries(Object.entries(cpu).map(([role, s]) => [role, cores(s)])) as Record<Role, number>),
    other: cores(Math.max(0, machine.busy - ours)),
    idle: cores(machine.idle),
  };
}
