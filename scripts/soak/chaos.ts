// The chaos loop: a schedule of faults drawn from a seeded generator, played against the fleet
// simulator and the deployment while the workload runs, plus the operator who returns repaired
// nodes to service. Node faults last about a minute (long enough for a node to be marked offline)
// and then clear; process kills come back after a few seconds; the database restarts once an
// hour of run, and at least once in any run. Handovers: an operator sends a node in service
// through one (its work released, wiped, attested); an implant puts a bootkit on a node and sends
// it through one, which must fail attestation and quarantine it; the operator later removes the
// implant and hands the node over again.
import { ApiError, type Client } from "../../agent/src/client";
import type { startSimulator } from "../../agent/src/simulator";
import { FATAL_XIDS, XID_POLICY } from "../../lib/fleet/xid-policy";
import type { ImplantRecord } from "./invariants";
import type { ManagedServer, Topology } from "./topology";

export const CHAOS_KINDS = [
  "xid_fatal",
  "xid_benign",
  "overheat",
  "silent_node",
  "partition",
  "agent_restart",
  "handover",
  "implant",
  "app_kill",
  "ingest_kill",
  "db_restart",
] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

/**
 * Faults per hour at 1,000 nodes (node faults scale with the fleet), the least any run gets, and
 * how long one takes to play out (it is injected early enough for that within the window).
 */
const RATES: Record<ChaosKind, { perHour: number; scalesWithNodes: boolean; min: number; playoutS: number }> = {
  // the remediation cap (5 per 10 minutes) must be reached in every run: 7 at least
  xid_fatal: { perHour: 40, scalesWithNodes: true, min: 7, playoutS: 15 },
  xid_benign: { perHour: 40, scalesWithNodes: true, min: 2, playoutS: 15 },
  // two hot minutes make the temperature rule fire
  overheat: { perHour: 10, scalesWithNodes: true, min: 1, playoutS: 180 },
  // past the offline threshold, and back
  silent_node: { perHour: 12, scalesWithNodes: true, min: 1, playoutS: 90 },
  partition: { perHour: 12, scalesWithNodes: true, min: 2, playoutS: 90 },
  agent_restart: { perHour: 30, scalesWithNodes: true, min: 2, playoutS: 15 },
  // a handover takes a few heartbeats and the wipe; the implant's failure, quarantine and the
  // operator's second handover take longer
  handover: { perHour: 20, scalesWithNodes: true, min: 2, playoutS: 90 },
  implant: { perHour: 10, scalesWithNodes: true, min: 2, playoutS: 150 },
  app_kill: { perHour: 6, scalesWithNodes: false, min: 1, playoutS: 30 },
  ingest_kill: { perHour: 4, scalesWithNodes: false, min: 1, playoutS: 30 },
  db_restart: { perHour: 1, scalesWithNodes: false, min: 1, playoutS: 60 },
};

export interface ChaosEvent {
  kind: ChaosKind;
  /** epoch ms when it was injected */
  at: number;
  target: string;
  node_id?: string;
  detail?: string;
}

type Sim = ReturnType<typeof startSimulator>;

/** Times (ms from the chaos start) for each fault, spread over the window; the database restart falls mid-window. */
export function chaosSchedule(rng: () => number, windowMs: number, nodes: number): Array<{ atMs: number; kind: ChaosKind }> {
  const hours = windowMs / 3_600_000;
  const out: Array<{ atMs: number; kind: ChaosKind }> = [];
  for (const kind of CHAOS_KINDS) {
    const r = RATES[kind];
    const n = Math.max(r.min, Math.round(r.perHour * hours * (r.scalesWithNodes ? nodes / 1000 : 1)));
    // spread evenly with jitter over the part of the window that leaves each time to play out
    const span = Math.max(windowMs / 5, windowMs - r.playoutS * 1000);
    for (let i = 0; i < n; i++) {
      const slot = span / n;
      const atMs = kind === "db_restart" && n === 1 ? span * 0.6 : slot * i + rng() * slot;
      out.push({ atMs, kind });
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}

export function startChaos(opts: {
  sim: Sim;
  topology: Topology;
  operator: Client;
  rng: () => number;
  windowMs: number;
  nodes: number;
  /** a node fault (silence, partition, overheating) lasts this long before it clears */
  faultS: [number, number];
  /** the operator returns a node to service this long after first seeing it quarantined or with a bad GPU */
  repairAfterS: number;
  log: (m: string) => void;
}) {
  const { sim, rng } = opts;
  const events: ChaosEvent[] = [];
  const skipped: Record<string, number> = {};
  const implants: ImplantRecord[] = [];
  const timers = new Set<NodeJS.Timeout>();
  /** hostnames under a fault that has not cleared yet, and when it clears */
  const activeUntil = new Map<string, number>();
  /** hostnames faulted lately: not picked again for a while, so each fault's outcome is its own */
  const lastFaultAt = new Map<string, number>();
  const cooldownMs = (opts.repairAfterS + 120) * 1000;
  let processFault: Promise<void> = Promise.resolve();
  let stopped = false;
  const later = (ms: number, fn: () => unknown) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) void Promise.resolve(fn()).catch((e: unknown) => opts.log(`chaos: ${(e as Error).message}`));
    }, ms);
    timers.add(t);
  };
  const between = (lo: number, hi: number) => lo + rng() * (hi - lo);

  /** A reachable node not under another fault; for hardware faults one that runs work, when there is such a node. */
  const pickNode = (busyOnly: boolean) => {
    const now = Date.now();
    const free = sim.nodes.filter(
      (n) =>
        n.id &&
        !n.silent &&
        !n.partitioned &&
        !implants.some((im) => im.node_id === n.id && im.cleared_at === null) &&
        (activeUntil.get(n.hostname) ?? 0) < now &&
        now - (lastFaultAt.get(n.hostname) ?? 0) > cooldownMs,
    );
    const working = free.filter((n) => n.jobs.size > 0);
    const pool = busyOnly && working.length ? working : free;
    return pool.length ? pool[Math.floor(rng() * pool.length)]! : undefined;
  };
  const record = (e: Omit<ChaosEvent, "at">) => {
    events.push({ ...e, at: Date.now() });
    opts.log(`chaos: ${e.kind} ${e.target}${e.detail ? ` (${e.detail})` : ""}`);
  };
  const faultMs = () => between(opts.faultS[0], opts.faultS[1]) * 1000;

  const nodeFault = async (kind: ChaosKind) => {
    const n = pickNode(true);
    if (!n) {
      skipped[kind] = (skipped[kind] ?? 0) + 1;
      return;
    }
    lastFaultAt.set(n.hostname, Date.now());
    // a hardware fault hits a GPU at work when there is one (an idle GPU does not overheat)
    const working = n.gpus.filter((g) => g.jobId !== undefined);
    const gpu = working.length ? working[Math.floor(rng() * working.length)]!.index : Math.floor(rng() * 8);
    const base = { kind, target: n.hostname, node_id: n.id };
    switch (kind) {
      case "xid_fatal":
      case "xid_benign": {
        const codes = kind === "xid_fatal" ? FATAL_XIDS : XID_POLICY.filter((r) => r.severity !== "fatal").map((r) => r.xid);
        const xid = codes[Math.floor(rng() * codes.length)]!;
        sim.injectFault(n.hostname, "xid", gpu, xid);
        record({ ...base, detail: `XID ${xid} on GPU ${gpu}` });
        // like an agent that reports a driver error the moment it sees it
        await sim.reportNow(n.hostname);
        return;
      }
      case "overheat":
      case "silent_node":
      case "partition": {
        // overheating must span the temperature rule's occurrences (whole minutes) to count
        const ms = faultMs() * (kind === "overheat" ? 3 : 1);
        activeUntil.set(n.hostname, Date.now() + ms);
        sim.injectFault(n.hostname, kind === "silent_node" ? "silent" : kind, gpu);
        record({ ...base, detail: `${Math.round(ms / 1000)} s` });
        later(ms, () => sim.injectFault(n.hostname, "clear"));
        return;
      }
      case "agent_restart":
        sim.injectFault(n.hostname, "restart");
        record(base);
        return;
      case "handover":
      case "implant": {
        // a node in service, by the operator (its work, if any, is released first)
        if (kind === "implant") sim.injectFault(n.hostname, "implant");
        const started = await opts.operator
          .call("POST", `/api/nodes/${n.id}/handover`, {
            mode: "full",
            reason: kind === "implant" ? "soak chaos: a node with a bootkit" : "soak chaos: an operator's handover",
          })
          .then(
            () => true,
            (e: unknown) => {
              // the node left service meanwhile (a fault, a reservation's handover): no fault of this kind
              if (!(e instanceof ApiError && e.status === 409)) throw e;
              return false;
            },
          );
        if (!started) {
          if (kind === "implant") sim.injectFault(n.hostname, "clear");
          skipped[kind] = (skipped[kind] ?? 0) + 1;
          return;
        }
        if (kind === "implant") implants.push({ node_id: n.id!, at: Date.now(), cleared_at: null });
        record({ ...base, detail: kind === "implant" ? "bootkit before the kernel, handover started" : "handover started" });
        return;
      }
    }
  };

  /** One process fault at a time: never every app down at once, as a rolling failure would not be. */
  const processKill = (kind: "app_kill" | "ingest_kill" | "db_restart") => {
    processFault = processFault.then(async () => {
      if (kind === "db_restart") {
        if (!opts.topology.canRestartDatabase) {
          skipped[kind] = (skipped[kind] ?? 0) + 1;
          return;
        }
        const downMs = between(3_000, 6_000);
        record({ kind, target: "postgresql", detail: `down ${Math.round(downMs / 1000)} s` });
        await opts.topology.restartDatabase(downMs);
        opts.log("chaos: the database is back");
        return;
      }
      const pool: ManagedServer[] = kind === "app_kill" ? opts.topology.apps : opts.topology.ingest;
      const victim = pool[Math.floor(rng() * pool.length)];
      if (!victim) {
        skipped[kind] = (skipped[kind] ?? 0) + 1;
        return;
      }
      const downMs = between(2_000, 6_000);
      record({ kind, target: victim.name, detail: `SIGKILL, back after ${Math.round(downMs / 1000)} s` });
      await victim.kill();
      await new Promise((r) => setTimeout(r, downMs));
      await victim.start();
      victim.restarts++;
      opts.log(`chaos: ${victim.name} is back`);
    });
    return processFault;
  };

  // the operator's round: nodes quarantined, or left in service with a bad GPU once the cap was
  // reached, are inspected and returned to service a while after they were first seen
  const firstSeen = new Map<string, number>();
  let repaired = 0;
  const repairRound = async (afterMs: number) => {
    const [quarantined, unhealthy] = await Promise.all([
      opts.operator.call<{ data: Array<{ id: string; hostname: string }> }>("GET", "/api/nodes?status=quarantined&limit=500"),
      opts.operator.call<{ data: Array<{ node_id: string }> }>("GET", "/api/gpus?status=unhealthy&limit=500"),
    ]);
    const byId = new Map(sim.nodes.map((n) => [n.id, n]));
    const due = new Map<string, "quarantined" | "available">();
    for (const n of quarantined.data) due.set(n.id, "quarantined");
    for (const g of unhealthy.data) if (!due.has(g.node_id)) due.set(g.node_id, "available");
    const now = Date.now();
    for (const [id, status] of due) {
      const node = byId.get(id);
      if (!node || node.silent || node.partitioned || (activeUntil.get(node.hostname) ?? 0) > now) continue;
      const seen = firstSeen.get(id) ?? now;
      firstSeen.set(id, seen);
      if (now - seen < afterMs) continue;
      // a node left in service with a bad GPU is taken out first, then returned like the others
      if (status === "available")
        await opts.operator.call("PATCH", `/api/nodes/${id}`, {
          status: "quarantined",
          reason: "soak operator: bad GPU after the remediation cap",
        });
      sim.injectFault(node.hostname, "clear");
      for (const im of implants) if (im.node_id === id && im.cleared_at === null) im.cleared_at = Date.now();
      // a node that owes a handover (its tenancy ended, or its handover failed) returns to service
      // only through one: wiped and attested again
      await opts.operator
        .call("PATCH", `/api/nodes/${id}`, { status: "available", reason: "soak operator: inspected and repaired" })
        .catch((e: unknown) => {
          if (!(e instanceof ApiError && e.status === 409 && JSON.stringify(e.body).includes("handover is due"))) throw e;
          return opts.operator.call("POST", `/api/nodes/${id}/handover`, {
            mode: "full",
            reason: "soak operator: inspected and repaired; handed over again",
          });
        });
      firstSeen.delete(id);
      repaired++;
    }
  };
  const repairLoop = (async () => {
    while (!stopped) {
      await repairRound(opts.repairAfterS * 1000).catch((e: unknown) => opts.log(`chaos: repair round: ${(e as Error).message}`));
      await new Promise((r) => setTimeout(r, 10_000));
    }
  })();

  for (const { atMs, kind } of chaosSchedule(rng, opts.windowMs, opts.nodes)) {
    later(atMs, () => (kind === "app_kill" || kind === "ingest_kill" || kind === "db_restart" ? processKill(kind) : nodeFault(kind)));
  }

  return {
    events,
    skipped,
    implants,
    repaired: () => repaired,
    /** stops injecting; ends every node fault still on, waits for a process fault in flight, then one last repair round */
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      for (const n of sim.nodes) if (n.silent || n.partitioned || n.gpus.some((g) => g.overheat)) sim.injectFault(n.hostname, "clear");
      await processFault;
      await repairLoop;
    },
    /** returns every node still out of service (the settle phase) */
    async repairAll() {
      activeUntil.clear();
      await repairRound(0);
    },
  };
}
