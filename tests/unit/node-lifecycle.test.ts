import { describe, expect, it } from "vitest";
import { NODE_STATUSES, OPERATOR_TARGETS, transition, type NodeState, type NodeStatus } from "@/lib/fleet/node-lifecycle";

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
};

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

  it.each(["available", "draining", "maintenance", "quarantined"] as const)("a heartbeat never moves a %s node", (s) => {
    expect(transition(at(s), { kind: "heartbeat" })).toMatchObject({ ok: true, changed: false, state: { status: s } });
  });

  it.each(["registered", "available", "draining", "maintenance", "quarantined"] as const)(
    "missed heartbeats take a %s node offline, remembering it, and the next heartbeat restores it",
    (s) => {
      const off = transition(at(s), { kind: "heartbeat_missed" });
      expect(off).toMatchObject({ changed: true, to: "offline", state: { status: "offline", statusBeforeOffline: s } });
      const back = transition(off.ok ? off.state : at(s), { kind: "heartbeat" });
      expect(back).toMatchObject({
        changed: true,
        from: "offline",
        to: s === "registered" ? "available" : s,
        state: { statusBeforeOffline: null },
      });
    },
  );

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
