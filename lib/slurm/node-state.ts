import { transition, type NodeEventKind, type NodeState, type NodeStatus } from "@/lib/fleet/node-lifecycle";

// Slurm's node states, and what they mean for GPUForge's node lifecycle. Pure (no I/O): the
// control plane asks it what to do with a Slurm node's report; the Slurm bridge uses the same
// reading to decide its own side (which drains are ours). Slurm's states are not new node statuses:
// each maps onto the lifecycle there is (lib/fleet/node-lifecycle.ts), and the Slurm state and
// reason are shown beside ours.
//
// Slurm prints a node's state as a base and flags: `scontrol show node` as IDLE+DRAIN,
// DOWN+NOT_RESPONDING, MIXED+PLANNED; sinfo in its long forms (drained, draining, down*, idle~).
// Both are read here; a base or flag this code does not know is kept as reported and changes nothing.

/** Drains GPUForge makes carry this prefix in their reason; a drain without it is Slurm's admins'. */
export const GPUFORGE_DRAIN_PREFIX = "gpuforge:";

/** The lifecycle statuses the mirror itself puts a node in (and so may take it out of again). */
export const MIRRORED_STATUSES = ["draining", "maintenance"] as const;
export type MirroredStatus = (typeof MIRRORED_STATUSES)[number];

export interface SlurmNodeState {
  /** IDLE, MIXED, ALLOCATED, DOWN, … (upper case) */
  base: string;
  /** DRAIN, NOT_RESPONDING, MAINTENANCE, RESERVED, … (upper case, sorted as reported) */
  flags: string[];
}

/** Bases a node takes work in (Slurm may still decline it for its flags). */
const WORKING_BASES = new Set(["IDLE", "MIXED", "ALLOCATED", "COMPLETING", "PLANNED", "BLOCKED"]);
/** Bases of a node that cannot run anything now. */
const DOWN_BASES = new Set(["DOWN", "FUTURE", "UNKNOWN", "ERROR"]);
/** Flags of a node Slurm cannot reach or that is not up (powered down, rebooting, registered wrongly). */
const DOWN_FLAGS = new Set([
  "NOT_RESPONDING",
  "POWERED_DOWN",
  "POWERING_DOWN",
  "POWER_DOWN",
  "POWERING_UP",
  "REBOOT_ISSUED",
  "INVALID_REG",
]);
/** Flags of a node Slurm's admins took out of service (FAIL: "expected to fail soon"). */
const DRAIN_FLAGS = new Set(["DRAIN", "FAIL"]);

// sinfo's long forms and its suffix characters (`down*`, `idle~`, `mix-`, `maint$`)
const LONG_FORMS: Record<string, SlurmNodeState> = {
  DRAINED: { base: "IDLE", flags: ["DRAIN"] },
  DRAINING: { base: "ALLOCATED", flags: ["DRAIN"] },
  DRAIN: { base: "IDLE", flags: ["DRAIN"] },
  FAILING: { base: "ALLOCATED", flags: ["FAIL"] },
  FAIL: { base: "IDLE", flags: ["FAIL"] },
  MAINT: { base: "IDLE", flags: ["MAINTENANCE"] },
  MAINTENANCE: { base: "IDLE", flags: ["MAINTENANCE"] },
  RESERVED: { base: "IDLE", flags: ["RESERVED"] },
  RESV: { base: "IDLE", flags: ["RESERVED"] },
  MIX: { base: "MIXED", flags: [] },
  ALLOC: { base: "ALLOCATED", flags: [] },
  COMP: { base: "COMPLETING", flags: [] },
  INVAL: { base: "DOWN", flags: ["INVALID_REG"] },
  NOT_RESPONDING: { base: "UNKNOWN", flags: ["NOT_RESPONDING"] },
};
const SUFFIX_FLAGS: Record<string, string> = {
  "*": "NOT_RESPONDING",
  "~": "POWERED_DOWN",
  "#": "POWERING_UP",
  "!": "POWER_DOWN",
  "%": "POWERING_DOWN",
  $: "MAINTENANCE",
  "@": "REBOOT_REQUESTED",
  "^": "REBOOT_ISSUED",
  "-": "PLANNED",
};

/** A state as Slurm printed it (`MIXED+DRAIN`, `down*`, `drained`), read into its base and flags. */
export function parseSlurmNodeState(raw: string): SlurmNodeState {
  let text = raw.trim().toUpperCase();
  const suffixFlags: string[] = [];
  while (text.length > 1 && SUFFIX_FLAGS[text.at(-1)!]) {
    suffixFlags.unshift(SUFFIX_FLAGS[text.at(-1)!]!);
    text = text.slice(0, -1);
  }
  const parts = text.split("+").filter(Boolean);
  const head = parts[0] ?? "UNKNOWN";
  const long = LONG_FORMS[head];
  const base = long ? long.base : head;
  const flags = [...(long?.flags ?? []), ...parts.slice(1), ...suffixFlags];
  return { base, flags: [...new Set(flags)] };
}

/** What a Slurm node's state says about taking GPUForge's work. */
export type SlurmCondition =
  /** Slurm runs work there */
  | "up"
  /** its admins drained it (or marked it FAIL): no new work, running work continues */
  | "drained"
  /** a maintenance reservation holds it */
  | "maintenance"
  /** an advance reservation holds it: only that reservation's jobs start there */
  | "reserved"
  /** down, not responding, powered off or rebooting: nothing runs there now */
  | "down"
  /** a state this code does not know: change nothing */
  | "unknown";

export interface SlurmReading {
  condition: SlurmCondition;
  /** the node is drained by GPUForge itself (its reason carries our prefix) */
  drainedByUs: boolean;
  drained: boolean;
}

export function readSlurmNode(state: SlurmNodeState, reason: string | null | undefined): SlurmReading {
  const drained = state.flags.some((f) => DRAIN_FLAGS.has(f));
  const drainedByUs = drained && (reason ?? "").trim().toLowerCase().startsWith(GPUFORGE_DRAIN_PREFIX);
  const condition: SlurmCondition =
    DOWN_BASES.has(state.base) || state.flags.some((f) => DOWN_FLAGS.has(f))
      ? "down"
      : drained && !drainedByUs
        ? "drained"
        : state.flags.includes("MAINTENANCE")
          ? "maintenance"
          : state.flags.includes("RESERVED")
            ? "reserved"
            : WORKING_BASES.has(state.base)
              ? "up"
              : "unknown";
  return { condition, drainedByUs, drained };
}

/** One lifecycle step for the mirror to apply, with the reason node_events records. */
interface LifecycleStep {
  event: NodeEventKind;
  reason: string;
}

export interface MirrorPlan {
  steps: LifecycleStep[];
  /** the status the mirror holds the node in afterwards (null: none of its own) */
  mirrored: MirroredStatus | null;
}

/** How the mirror names Slurm's state in node events: `Slurm: DRAIN (bad fan)`. */
export function describeSlurmState(raw: string, reason: string | null | undefined): string {
  const r = reason?.trim();
  return `Slurm: ${raw}${r ? ` (${r.length > 200 ? `${r.slice(0, 199)}…` : r})` : ""}`;
}

/**
 * The lifecycle steps that bring a node in line with what Slurm reports. The mirror only ever takes
 * a node out of service for Slurm's reasons (down → offline, drained or reserved → draining, a
 * maintenance reservation → maintenance) and only undoes what it did itself: a status an operator
 * or a remediation chose (a quarantine, a drain of ours) stays until they change it. Slurm deciding
 * a node is down changes nothing about its jobs here: Slurm says how they ended.
 */
export function planMirror(state: NodeState, mirrored: MirroredStatus | null, reading: SlurmReading, said: string): MirrorPlan {
  const steps: LifecycleStep[] = [];
  let s = state;
  const apply = (event: NodeEventKind) => {
    const t = transition(s, event);
    if (!t.ok) return false;
    if (t.changed || t.state.statusBeforeOffline !== s.statusBeforeOffline) steps.push({ event, reason: said });
    s = t.state;
    return true;
  };
  if (reading.condition === "unknown") return { steps, mirrored };
  if (reading.condition === "down") {
    // offline at once, remembering where it was: it comes back there when Slurm has it up again
    if (s.status !== "offline") apply({ kind: "heartbeat_missed" });
    return { steps, mirrored };
  }
  // Slurm reaches it: what a heartbeat does (registered → available, offline → where it was)
  apply({ kind: "heartbeat" });
  const want: MirroredStatus | null =
    reading.condition === "drained" || reading.condition === "reserved"
      ? "draining"
      : reading.condition === "maintenance"
        ? "maintenance"
        : null;
  let held = mirrored;
  if (held && s.status !== held) held = null; // someone else changed the node since: it is theirs now
  if (held && held !== want) {
    // Slurm's condition changed or cleared: undo what the mirror did
    if (apply({ kind: "operator", target: "available" })) held = null;
  }
  if (want && !held) {
    if (s.status === "available" || (want === "maintenance" && s.status === "draining" && mirrored === "draining")) {
      if (apply({ kind: "operator", target: want })) held = want;
    }
  }
  return { steps, mirrored: held };
}

export interface DrainInstruction {
  /** true: drain it in Slurm (with `reason`); false: resume our own drain, if any; null: leave Slurm as it is */
  drain: boolean | null;
  reason: string | null;
}

/**
 * What GPUForge wants of the Slurm node: drained while GPUForge holds it out of service for its own
 * reasons (an operator's drain, maintenance or quarantine, an automatic quarantine), our drain
 * lifted once it is back in service. A status the mirror took from Slurm asks nothing of Slurm.
 */
export function desiredDrain(state: NodeState, mirrored: MirroredStatus | null, why: string | null): DrainInstruction {
  const status: NodeStatus = state.status === "offline" ? (state.statusBeforeOffline ?? "available") : state.status;
  if (status === "draining" || status === "maintenance" || status === "quarantined") {
    if (mirrored === status) return { drain: null, reason: null };
    return { drain: true, reason: drainReason(status, why) };
  }
  if (state.status === "offline") return { drain: null, reason: null };
  return { drain: false, reason: null };
}

/** Our drain's reason as Slurm shows it: our prefix, the status, and why (one line, bounded). */
export function drainReason(status: string, why: string | null): string {
  // eslint-disable-next-line no-control-regex
  const clean = (why ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  const text = `${GPUFORGE_DRAIN_PREFIX} ${status}${clean && clean !== `operator set ${status}` ? ` - ${clean}` : ""}`;
  return text.length > 240 ? `${text.slice(0, 239)}…` : text;
}
