import { describe, expect, it } from "vitest";
import {
  HANDOVER_STATUSES,
  NODE_STATUSES,
  OPERATOR_TARGETS,
  transition,
  WORKFLOW_STEPS,
  type NodeEventKind,
  type NodeState,
  type NodeStatus,
  type WorkflowStep,
} from "@/lib/fleet/node-lifecycle";

const at = (status: NodeStatus, before: NodeState["statusBeforeOffline"] = null): NodeState => ({
  status,
  statusBeforeOffline: status === "offline" ? (before ?? "available") : null,
});

// Every (state, operator target) pair: the expected outcome, written out in full.
const OPERATOR_TABLE: Record<Exclude<NodeStatus, "offline">, Record<(typeof OPERATOR_TARGETS)[number], NodeStatus | "refused" | "same">> = {
  registered: { available: "refused", draining: "refused", maintenance: "refused", quarantined: "quarantined" },
  available: { available: "same", draining: "draining", maintenance: "maintenance", quarantined: "quarantined" },
  draining: { available: "available", draining: "same", maintenance: "maintenance", quarantined: "quarantined" },
  maintenance: { available: "available", draining: "refused", maintenance: "same", quarantined: "quarantined" },
  quarantined: { available: "available", draining: "refused", maintenance: "refused", quarantined: "same" },
  // a handover or provisioning is stopped by taking the node out of service; only its own steps return it
  provisioning: { available: "refused", draining: "refused", maintenance: "maintenance", quarantined: "quarantined" },
  releasing: { available: "refused", draining: "refused", maintenance: "maintenance", quarantined: "quarantined" },
  wiping: { available: "refused", draining: "refused", maintenance: "maintenance", quarantined: "quarantined" },
  inspecting: { available: "refused", draining: "refused", maintenance: "maintenance", quarantined: "quarantined" },
  attestation_failed: { available: "refused", draining: "refused", maintenance: "maintenance", quarantined: "quarantined" },
};

type Online = Exclude<NodeStatus, "offline">;
type Outcome = NodeStatus | "refused" | "same";

// Where each lifecycle event of the handover and provisioning workflows takes a node in each state.
const WORKFLOW_TABLE: Record<Online, { full: Outcome; inspect: Outcome; provision: Outcome } & Record<WorkflowStep, Outcome>> = {
  registered: {
    full: "refused",
    inspect: "refused",
    provision: "provisioning",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  available: {
    full: "releasing",
    inspect: "refused",
    provision: "refused",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  draining: {
    full: "releasing",
    inspect: "refused",
    provision: "refused",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  maintenance: {
    full: "releasing",
    inspect: "inspecting",
    provision: "provisioning",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  quarantined: {
    full: "releasing",
    inspect: "inspecting",
    provision: "provisioning",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  provisioning: {
    full: "refused",
    inspect: "refused",
    provision: "refused",
    released: "refused",
    wiped: "refused",
    booted: "inspecting",
    attested: "refused",
    attestation_failed: "refused",
  },
  releasing: {
    full: "refused",
    inspect: "refused",
    provision: "refused",
    released: "wiping",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  wiping: {
    full: "refused",
    inspect: "refused",
    provision: "refused",
    released: "refused",
    wiped: "inspecting",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
  inspecting: {
    full: "refused",
    inspect: "refused",
    provision: "refused",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "available",
    attestation_failed: "attestation_failed",
  },
  attestation_failed: {
    full: "releasing",
    inspect: "inspecting",
    provision: "refused",
    released: "refused",
    wiped: "refused",
    booted: "refused",
    attested: "refused",
    attestation_failed: "refused",
  },
};

const eventOf = (name: keyof (typeof WORKFLOW_TABLE)["registered"]): NodeEventKind =>
  name === "full" || name === "inspect"
    ? { kind: "handover", mode: name }
    : name === "provision"
      ? { kind: "provision" }
      : { kind: "workflow", step: name };

function expectOutcome(from: NodeStatus, t: ReturnType<typeof transition>, expected: Outcome) {
  if (expected === "refused") expect(t.ok).toBe(false);
  else if (expected === "same") expect(t).toMatchObject({ ok: true, changed: false });
  else expect(t).toMatchObject({ ok: true, changed: true, from, to: expected, state: { status: expected, statusBeforeOffline: null } });
}

describe("node lifecycle", () => {
  for (const [from, row] of Object.entries(OPERATOR_TABLE)) {
    for (const [target, expected] of Object.entries(row)) {
      it(`operator: ${from} → ${target} is ${expected}`, () => {
        const t = transition(at(from as NodeStatus), { kind: "operator", target: target as never });
        if (expected === "refused") expect(t.ok).toBe(false);
        else if (expected === "same") expect(t).toMatchObject({ ok: true, changed: false });
        else
          expect(t).toMatchObject({ ok: true, changed: true, from, to: expected, state: { status: expected, statusBeforeOffline: null } });
      });
    }
  }

  it("a heartbeat makes a registered node available", () => {
    expect(transition(at("registered"), { kind: "heartbeat" })).toMatchObject({ changed: true, to: "available" });
  });

  it.each(["available", "draining", "maintenance", "quarantined", ...HANDOVER_STATUSES] as const)(
    "a heartbeat never moves a %s node",
    (s) => {
      expect(transition(at(s), { kind: "heartbeat" })).toMatchObject({ ok: true, changed: false, state: { status: s } });
    },
  );

  it.each([
    "registered",
    "available",
    "draining",
    "maintenance",
    "quarantined",
    "releasing",
    "wiping",
    "inspecting",
    "attestation_failed",
  ] as const)("missed heartbeats take a %s node offline, remembering it, and the next heartbeat restores it", (s) => {
    const off = transition(at(s), { kind: "heartbeat_missed" });
    expect(off).toMatchObject({ changed: true, to: "offline", state: { status: "offline", statusBeforeOffline: s } });
    const back = transition(off.ok ? off.state : at(s), { kind: "heartbeat" });
    expect(back).toMatchObject({
      changed: true,
      from: "offline",
      to: s === "registered" ? "available" : s,
      state: { statusBeforeOffline: null },
    });
  });

  it("a missed heartbeat of an offline node changes nothing", () => {
    expect(transition(at("offline", "maintenance"), { kind: "heartbeat_missed" })).toMatchObject({
      changed: false,
      state: { statusBeforeOffline: "maintenance" },
    });
  });

  it("quarantining an offline node makes it come back quarantined; returning or draining waits for it", () => {
    const q = transition(at("offline", "available"), { kind: "operator", target: "quarantined" });
    expect(q).toMatchObject({ ok: true, changed: false, state: { status: "offline", statusBeforeOffline: "quarantined" } });
    expect(transition(q.ok ? q.state : at("offline"), { kind: "heartbeat" })).toMatchObject({ to: "quarantined" });
    for (const target of ["available", "draining"] as const) {
      for (const before of ["registered", "available", "draining", "maintenance", "quarantined"] as const) {
        expect(transition(at("offline", before), { kind: "operator", target }).ok).toBe(false);
      }
    }
  });

  // Taking an offline node out of service follows the table for the state it will return in.
  it.each(["registered", "available", "draining", "maintenance", "quarantined"] as const)(
    "an offline node that returns %s is sent to maintenance or quarantine by the same rules",
    (before) => {
      for (const target of ["maintenance", "quarantined"] as const) {
        const t = transition(at("offline", before), { kind: "operator", target });
        const expected = OPERATOR_TABLE[before][target];
        if (expected === "refused") {
          expect(t.ok).toBe(false);
          continue;
        }
        expect(t).toMatchObject({ ok: true, changed: false, state: { status: "offline", statusBeforeOffline: target } });
        expect(transition(t.ok ? t.state : at("offline"), { kind: "heartbeat" })).toMatchObject({ changed: true, to: target });
      }
    },
  );

  it("automatic quarantine follows the operator's quarantine rules", () => {
    for (const s of NODE_STATUSES) {
      const auto = transition(at(s), { kind: "auto_quarantine" });
      const manual = transition(at(s), { kind: "operator", target: "quarantined" });
      expect(auto).toEqual(manual);
    }
  });

  it("no sequence of heartbeats alone ever leaves maintenance or quarantine", () => {
    for (const s of ["maintenance", "quarantined"] as const) {
      let state = at(s);
      for (const kind of ["heartbeat", "heartbeat_missed", "heartbeat", "heartbeat_missed", "heartbeat"] as const) {
        const t = transition(state, { kind });
        if (t.ok) state = t.state;
      }
      expect(state.status).toBe(s);
    }
  });
});

describe("node lifecycle: handover and provisioning", () => {
  for (const [from, row] of Object.entries(WORKFLOW_TABLE)) {
    for (const [event, expected] of Object.entries(row)) {
      it(`${from} → ${event} is ${expected}`, () => {
        expectOutcome(from as NodeStatus, transition(at(from as NodeStatus), eventOf(event as keyof typeof row)), expected);
      });
    }
  }

  it("every step of the workflows is in the table", () => {
    expect(
      Object.keys(WORKFLOW_TABLE.registered)
        .filter((k) => !["full", "inspect", "provision"].includes(k))
        .sort(),
    ).toEqual([...WORKFLOW_STEPS].sort());
    expect(Object.keys(WORKFLOW_TABLE).sort()).toEqual(NODE_STATUSES.filter((s) => s !== "offline").sort());
  });

  it("a node being provisioned stays provisioning when it goes silent", () => {
    expect(transition(at("provisioning"), { kind: "heartbeat_missed" })).toEqual({ ok: true, changed: false, state: at("provisioning") });
  });

  it("automatic quarantine takes a node out of any handover state (a failed wipe, a failed attestation, a failed provisioning)", () => {
    for (const s of HANDOVER_STATUSES) {
      expect(transition(at(s), { kind: "auto_quarantine" })).toMatchObject({ ok: true, changed: true, from: s, to: "quarantined" });
    }
  });

  it("the whole handover: releasing → wiping → inspecting → available", () => {
    let state = at("available");
    const path: NodeStatus[] = [];
    for (const e of [
      { kind: "handover", mode: "full" },
      ...(["released", "wiped", "attested"] as const).map((step) => ({ kind: "workflow", step })),
    ] as NodeEventKind[]) {
      const t = transition(state, e);
      if (!t.ok) throw new Error(t.reason);
      state = t.state;
      path.push(state.status);
    }
    expect(path).toEqual(["releasing", "wiping", "inspecting", "available"]);
  });

  it("a failed attestation: inspecting → attestation_failed → quarantined, then re-inspected back to available", () => {
    const failed = transition(at("inspecting"), { kind: "workflow", step: "attestation_failed" });
    const quarantined = transition(failed.ok ? failed.state : at("inspecting"), { kind: "auto_quarantine" });
    expect(quarantined).toMatchObject({ to: "quarantined" });
    const again = transition(quarantined.ok ? quarantined.state : at("quarantined"), { kind: "handover", mode: "inspect" });
    expect(again).toMatchObject({ to: "inspecting" });
    expect(transition(again.ok ? again.state : at("inspecting"), { kind: "workflow", step: "attested" })).toMatchObject({
      to: "available",
    });
  });

  it("provisioning: an out-of-service or never-used node is provisioned, booted, attested, and only then available", () => {
    for (const from of ["registered", "maintenance", "quarantined"] as const) {
      const p = transition(at(from), { kind: "provision" });
      expect(p).toMatchObject({ to: "provisioning" });
      // the agent registering or heartbeating does not make it available: only passing attestation does
      expect(transition(p.ok ? p.state : at(from), { kind: "heartbeat" })).toMatchObject({
        changed: false,
        state: { status: "provisioning" },
      });
      const booted = transition(p.ok ? p.state : at(from), { kind: "workflow", step: "booted" });
      expect(booted).toMatchObject({ to: "inspecting" });
      expect(transition(booted.ok ? booted.state : at(from), { kind: "workflow", step: "attested" })).toMatchObject({ to: "available" });
    }
    expect(transition(at("provisioning"), { kind: "auto_quarantine" })).toMatchObject({ to: "quarantined" });
  });

  describe("offline nodes", () => {
    const befores = NODE_STATUSES.filter((s): s is Online => s !== "offline" && s !== "provisioning");

    it.each(befores)("a tenancy ending while a node is offline (returning %s) brings it back into the handover when allowed", (before) => {
      const t = transition(at("offline", before), { kind: "handover", mode: "full" });
      const expected = WORKFLOW_TABLE[before].full;
      if (expected === "refused") {
        expect(t.ok).toBe(false);
        return;
      }
      expect(t).toMatchObject({ ok: true, changed: false, state: { status: "offline", statusBeforeOffline: "releasing" } });
      expect(transition(t.ok ? t.state : at("offline"), { kind: "heartbeat" })).toMatchObject({ changed: true, to: "releasing" });
    });

    it.each(befores)("an offline node returning %s is re-inspected by the same rules", (before) => {
      const t = transition(at("offline", before), { kind: "handover", mode: "inspect" });
      if (WORKFLOW_TABLE[before].inspect === "refused") expect(t.ok).toBe(false);
      else expect(t).toMatchObject({ ok: true, changed: false, state: { status: "offline", statusBeforeOffline: "inspecting" } });
    });

    it.each(befores)("an offline node returning %s is provisioned when it is out of service or unused (the BMC powers it)", (before) => {
      const t = transition(at("offline", before), { kind: "provision" });
      if (WORKFLOW_TABLE[before].provision === "refused") expect(t.ok).toBe(false);
      else expect(t).toMatchObject({ ok: true, changed: true, from: "offline", to: "provisioning", state: { statusBeforeOffline: null } });
    });

    it.each(WORKFLOW_STEPS)("the workflow step %s waits for an offline node", (step) => {
      for (const before of befores) expect(transition(at("offline", before), { kind: "workflow", step }).ok).toBe(false);
    });

    it.each(["releasing", "wiping", "inspecting", "attestation_failed"] as const)(
      "an offline node in %s can be quarantined or sent to maintenance (it returns there), never returned to service",
      (before) => {
        for (const target of ["quarantined", "maintenance"] as const) {
          expect(transition(at("offline", before), { kind: "operator", target })).toMatchObject({
            ok: true,
            changed: false,
            state: { status: "offline", statusBeforeOffline: target },
          });
        }
        expect(transition(at("offline", before), { kind: "operator", target: "available" }).ok).toBe(false);
      },
    );
  });

  it("no sequence of heartbeats and operator returns ever makes a handover node available without its steps", () => {
    for (const s of HANDOVER_STATUSES) {
      let state = at(s);
      for (const e of [
        { kind: "heartbeat" },
        { kind: "heartbeat_missed" },
        { kind: "heartbeat" },
        { kind: "operator", target: "available" },
        { kind: "operator", target: "draining" },
      ] as NodeEventKind[]) {
        const t = transition(state, e);
        if (t.ok) state = t.state;
      }
      expect(state.status === "available").toBe(false);
    }
  });
});
