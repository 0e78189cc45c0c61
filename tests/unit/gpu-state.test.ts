import { describe, expect, it } from "vitest";
import { gpuEffectiveState } from "@/lib/fleet/gpu-state";

const base = { status: "available", holder: null, nodeStatus: "available", reservedFor: null };
const job = { kind: "job" as const, name: "train-7b", tenant: "Acme" };

describe("a GPU's effective state", () => {
  it("is held by its holder, never 'available' beside it", () => {
    expect(gpuEffectiveState({ ...base, holder: job })).toMatchObject({ kind: "held", detail: "Held by job train-7b (Acme)" });
  });

  it("is unavailable on a node that takes no new work, naming why, for every such status", () => {
    for (const nodeStatus of ["maintenance", "quarantined", "draining", "offline", "registered", "wiping"]) {
      const s = gpuEffectiveState({ ...base, nodeStatus });
      expect(s.kind).toBe("unavailable");
      expect(s.detail).toMatch(/^Nothing new starts: the node /);
    }
    expect(gpuEffectiveState({ ...base, nodeStatus: "maintenance" }).detail).toContain("in maintenance");
  });

  it("keeps work that still runs on a draining node as held, and says the node drains", () => {
    expect(gpuEffectiveState({ ...base, holder: job, nodeStatus: "draining" }).detail).toBe(
      "Held by job train-7b (Acme); the node is draining: running work finishes, nothing new starts",
    );
  });

  it("puts hardware first: unhealthy and missing GPUs say so whoever held them", () => {
    expect(gpuEffectiveState({ ...base, status: "unhealthy", holder: job }).kind).toBe("unhealthy");
    expect(gpuEffectiveState({ ...base, status: "missing", nodeStatus: "maintenance" }).kind).toBe("missing");
  });

  it("is reserved when idle on a node a reservation holds, and idle otherwise", () => {
    const until = new Date("2026-12-04T18:00:00Z");
    expect(gpuEffectiveState({ ...base, reservedFor: { tenant: "Acme", until } })).toMatchObject({
      kind: "reserved_idle",
      detail: "Idle, reserved for Acme until 2026-12-04 18:00 UTC: only its work starts here",
    });
    expect(gpuEffectiveState(base)).toMatchObject({ kind: "idle", label: "idle" });
  });
});
