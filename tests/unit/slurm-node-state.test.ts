import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NODE_STATUSES, transition, type NodeEventKind, type NodeState, type NodeStatus } from "@/lib/fleet/node-lifecycle";
import {
  desiredDrain,
  drainReason,
  GPUFORGE_DRAIN_PREFIX,
  parseSlurmNodeState,
  planMirror,
  readSlurmNode,
  type MirroredStatus,
  type SlurmCondition,
} from "@/lib/slurm/node-state";

const at = (status: NodeStatus, before: NodeState["statusBeforeOffline"] = null): NodeState => ({
  status,
  statusBeforeOffline: status === "offline" ? (before ?? "available") : null,
});
const read = (state: string, reason: string | null = null) => readSlurmNode(parseSlurmNodeState(state), reason);

describe("Slurm node states", () => {
  it.each([
    // scontrol's base+flags, as 22.05 and later print them
    ["IDLE", "up"],
    ["MIXED", "up"],
    ["ALLOCATED", "up"],
    ["COMPLETING", "up"],
    ["MIXED+PLANNED", "up"],
    ["IDLE+CLOUD", "up"],
    ["ALLOCATED+COMPLETING", "up"],
    ["IDLE+REBOOT_REQUESTED", "up"],
    ["MIXED+DRAIN", "drained"],
    ["IDLE+DRAIN", "drained"],
    ["ALLOCATED+FAIL", "drained"],
    ["IDLE+MAINTENANCE+RESERVED", "maintenance"],
    ["IDLE+RESERVED", "reserved"],
    ["DOWN", "down"],
    ["DOWN+NOT_RESPONDING", "down"],
    ["MIXED+NOT_RESPONDING", "down"],
    ["DOWN+DRAIN+NOT_RESPONDING", "down"],
    ["IDLE+POWERED_DOWN", "down"],
    ["IDLE+CLOUD+POWERING_UP", "down"],
    ["DOWN+REBOOT_ISSUED", "down"],
    ["DOWN+DRAIN+INVALID_REG", "down"],
    ["FUTURE", "down"],
    ["UNKNOWN", "down"],
    // sinfo's long forms and suffixes
    ["drained", "drained"],
    ["draining", "drained"],
    ["failing", "drained"],
    ["down*", "down"],
    ["idle~", "down"],
    ["mixed-", "up"],
    ["maint", "maintenance"],
    ["idle$", "maintenance"],
    ["reserved", "reserved"],
    ["inval", "down"],
    // what this code does not know changes nothing
    ["QUANTUM", "unknown"],
    ["", "down"],
  ] as Array<[string, SlurmCondition]>)("%s reads as %s", (state, condition) => {
    expect(read(state).condition).toBe(condition);
  });

  it("keeps flags it does not know, and tells our drains from Slurm's admins' by the reason's prefix", () => {
    expect(parseSlurmNodeState("MIXED+DRAIN+SOMETHING_NEW")).toEqual({ base: "MIXED", flags: ["DRAIN", "SOMETHING_NEW"] });
    expect(read("MIXED+DRAIN+SOMETHING_NEW", "bad fan").condition).toBe("drained");
    const ours = read("IDLE+DRAIN", `${GPUFORGE_DRAIN_PREFIX} quarantined - XID 79`);
    expect(ours).toEqual({ condition: "up", drainedByUs: true, drained: true });
    expect(read("IDLE+DRAIN", "GPUFORGE: quarantined").drainedByUs).toBe(true);
    // a prefix elsewhere in the reason is not ours
    expect(read("IDLE+DRAIN", "see gpuforge: later").drainedByUs).toBe(false);
  });
});

describe("mirroring Slurm onto the node lifecycle", () => {
  const steps = (s: NodeState, mirrored: MirroredStatus | null, state: string, reason: string | null = null) =>
    planMirror(s, mirrored, read(state, reason), "why");
  const targets = (p: ReturnType<typeof steps>) => p.steps.map((x) => (x.event.kind === "operator" ? x.event.target : x.event.kind));

  it("a first report makes a registered node available; an idle node stays as it is", () => {
    expect(targets(steps(at("registered"), null, "IDLE"))).toEqual(["heartbeat"]);
    expect(steps(at("available"), null, "MIXED")).toEqual({ steps: [], mirrored: null });
  });

  it("a drain by Slurm's admins drains the node here, and their resume returns it", () => {
    const drained = steps(at("available"), null, "MIXED+DRAIN", "bad fan");
    expect(targets(drained)).toEqual(["draining"]);
    expect(drained.mirrored).toBe("draining");
    const resumed = steps(at("draining"), "draining", "IDLE");
    expect(targets(resumed)).toEqual(["available"]);
    expect(resumed.mirrored).toBeNull();
  });

  it("never undoes what an operator or a remediation chose", () => {
    // quarantined by GPUForge while Slurm has it drained: Slurm's resume leaves the quarantine
    expect(steps(at("quarantined"), null, "IDLE")).toEqual({ steps: [], mirrored: null });
    expect(steps(at("quarantined"), null, "IDLE+DRAIN", "bad fan")).toEqual({ steps: [], mirrored: null });
    // the mirror drained it, then an operator quarantined it: no longer the mirror's to return
    expect(steps(at("quarantined"), "draining", "IDLE")).toEqual({ steps: [], mirrored: null });
    // an operator's own drain, and Slurm idle: stays drained
    expect(steps(at("draining"), null, "IDLE")).toEqual({ steps: [], mirrored: null });
  });

  it("our own drain in Slurm is not Slurm's admins' drain", () => {
    expect(steps(at("quarantined"), null, "IDLE+DRAIN", `${GPUFORGE_DRAIN_PREFIX} quarantined`)).toEqual({ steps: [], mirrored: null });
    expect(steps(at("available"), null, "IDLE+DRAIN", `${GPUFORGE_DRAIN_PREFIX} quarantined`)).toEqual({ steps: [], mirrored: null });
  });

  it("down in Slurm is offline here, at once, and back where it was when Slurm has it up", () => {
    const down = steps(at("draining"), "draining", "DOWN+NOT_RESPONDING", "Not responding");
    expect(targets(down)).toEqual(["heartbeat_missed"]);
    expect(down.mirrored).toBe("draining");
    expect(steps(at("offline", "draining"), "draining", "DOWN")).toEqual({ steps: [], mirrored: "draining" });
    // back up, and the admins' drain was lifted meanwhile: back to available
    expect(targets(steps(at("offline", "draining"), "draining", "IDLE"))).toEqual(["heartbeat", "available"]);
  });

  it("a maintenance reservation puts it in maintenance; a plain reservation drains it", () => {
    expect(targets(steps(at("available"), null, "IDLE+MAINTENANCE+RESERVED"))).toEqual(["maintenance"]);
    expect(targets(steps(at("available"), null, "IDLE+RESERVED"))).toEqual(["draining"]);
    // from the mirror's drain to its maintenance and back
    expect(targets(steps(at("draining"), "draining", "IDLE+MAINTENANCE"))).toEqual(["available", "maintenance"]);
    expect(targets(steps(at("maintenance"), "maintenance", "IDLE+DRAIN", "after maint"))).toEqual(["available", "draining"]);
  });

  it("an unknown state changes nothing", () => {
    expect(steps(at("available"), null, "QUANTUM")).toEqual({ steps: [], mirrored: null });
    expect(steps(at("offline", "available"), null, "QUANTUM")).toEqual({ steps: [], mirrored: null });
  });

  it("whatever Slurm says, every step is one the state machine allows, and the mirror only ever holds what it set", () => {
    const states = fc.constantFrom(
      "IDLE",
      "MIXED",
      "MIXED+DRAIN",
      "DOWN+NOT_RESPONDING",
      "IDLE+MAINTENANCE",
      "IDLE+RESERVED",
      "IDLE+DRAIN",
      "NEW_STATE",
    );
    const status = fc.constantFrom(...NODE_STATUSES.filter((s) => s !== "offline"));
    fc.assert(
      fc.property(status, fc.array(fc.tuple(states, fc.boolean()), { maxLength: 12 }), (start, reports) => {
        let s: NodeState = at(start);
        let mirrored: MirroredStatus | null = null;
        for (const [state, ours] of reports) {
          const plan = planMirror(s, mirrored, read(state, ours ? `${GPUFORGE_DRAIN_PREFIX} x` : "admin"), "why");
          // replay through the state machine: planMirror only plans allowed steps
          for (const step of plan.steps) {
            const r = replay(s, step.event);
            expect(r).not.toBeNull();
            s = r!;
          }
          mirrored = plan.mirrored;
          if (mirrored) expect([s.status, s.statusBeforeOffline]).toContain(mirrored);
        }
      }),
    );
  });
});

function replay(s: NodeState, e: NodeEventKind): NodeState | null {
  const t = transition(s, e);
  return t.ok ? t.state : null;
}

describe("what GPUForge asks of Slurm", () => {
  it("drains a node GPUForge holds out of service, with our prefix and the reason", () => {
    expect(desiredDrain(at("quarantined"), null, "XID 79 on GPU 3")).toEqual({
      drain: true,
      reason: `${GPUFORGE_DRAIN_PREFIX} quarantined - XID 79 on GPU 3`,
    });
    expect(desiredDrain(at("draining"), null, "operator set draining").reason).toBe(`${GPUFORGE_DRAIN_PREFIX} draining`);
    // an offline node GPUForge quarantined stays drained in Slurm when it returns
    expect(desiredDrain(at("offline", "quarantined"), null, null).drain).toBe(true);
  });

  it("asks nothing for a status the mirror took from Slurm, and lifts our drain once back in service", () => {
    expect(desiredDrain(at("draining"), "draining", "Slurm: DRAIN")).toEqual({ drain: null, reason: null });
    expect(desiredDrain(at("available"), null, null)).toEqual({ drain: false, reason: null });
    expect(desiredDrain(at("offline", "available"), null, null)).toEqual({ drain: null, reason: null });
  });

  it("keeps the reason on one bounded line", () => {
    const r = drainReason("quarantined", `line one\nline two\t${"x".repeat(400)}`);
    expect(r).not.toMatch(/[\n\t]/);
    expect(r.length).toBeLessThanOrEqual(240);
    expect(r.startsWith(GPUFORGE_DRAIN_PREFIX)).toBe(true);
  });
});
