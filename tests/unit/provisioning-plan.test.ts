import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Exchange } from "@/lib/redfish/client";
import { appendExchanges, currentStep, dueAt, provisioningView, type ProvisioningWorkflow, type StepRecord } from "@/lib/provisioning/plan";
import { PROVISIONING_STEPS, provisionBody } from "@/lib/provisioning/schemas";

// A provisioning as its records tell it: the next step, when it is due, the bounded exchange log,
// and the view the API and the node page show.

const t0 = new Date("2026-12-01T10:00:00Z");
const record = (name: string, status: StepRecord["status"], details: Record<string, unknown> = {}, id = name): StepRecord => ({
  id,
  name,
  status,
  leaseToken: "7",
  message: `${name} ${status}`,
  details,
  startedAt: t0,
  finishedAt: status === "running" ? null : new Date(t0.getTime() + 1500),
});
const workflow = (steps: StepRecord[], over: Partial<ProvisioningWorkflow> = {}): ProvisioningWorkflow => ({
  id: "w1",
  nodeId: "n1",
  status: "running",
  requestedBy: "operator",
  details: { image_url: "https://images.example/a.iso" },
  outcome: null,
  startedAt: t0,
  finishedAt: null,
  steps,
  ...over,
});
const ex = (i: number): Exchange => ({ at: t0.toISOString(), method: "GET", path: `/redfish/v1/x/${i}`, status: 200, duration_ms: i });

describe("the next step", () => {
  it("is the first step not yet done, with its running or failed record", () => {
    expect(currentStep(workflow([]))).toEqual({ name: "discover" });
    expect(currentStep(workflow([record("discover", "succeeded")]))).toEqual({ name: "power_off" });
    const running = record("power_off", "running");
    expect(currentStep(workflow([record("discover", "succeeded"), running]))).toEqual({ name: "power_off", record: running });
    const failed = record("insert_media", "failed");
    expect(currentStep(workflow([...["discover", "power_off", "eject_media"].map((n) => record(n, "succeeded")), failed]))).toEqual({
      name: "insert_media",
      record: failed,
    });
    expect(currentStep(workflow(PROVISIONING_STEPS.map((n) => record(n, "succeeded"))))).toBeNull();
  });
  it("reads the latest record of a step that was tried more than once", () => {
    const again = record("discover", "running", {}, "second");
    expect(currentStep(workflow([record("discover", "failed", {}, "first"), again]))?.record).toBe(again);
  });
  it("is due now, or when its running step said to come back", () => {
    const now = t0.getTime();
    expect(dueAt(workflow([]), now)).toBe(now);
    expect(dueAt(workflow([record("discover", "running", { next_at: "2026-12-01T10:00:05Z" })]), now)).toBe(now + 5000);
    expect(dueAt(workflow([record("discover", "running", { next_at: "soon" })]), now)).toBe(now);
    expect(dueAt(workflow([record("discover", "failed", { next_at: "2026-12-01T10:00:05Z" })]), now)).toBe(now);
  });
});

describe("a step's exchange log", () => {
  it("keeps everything while short, then the first 20 and the latest 40, counting what it left out", () => {
    const a = appendExchanges({}, [ex(1), ex(2)]);
    expect(a).toEqual({ exchanges: [ex(1), ex(2)], exchanges_omitted: 0 });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 12 }), (batches) => {
        let state = {};
        let n = 0;
        for (const size of batches) {
          state = {
            ...state,
            ...appendExchanges(
              state,
              Array.from({ length: size }, () => ex(n++)),
            ),
          };
        }
        const kept = (state as { exchanges?: Exchange[] }).exchanges ?? [];
        const omitted = (state as { exchanges_omitted?: number }).exchanges_omitted ?? 0;
        expect(kept.length + omitted).toBe(n);
        expect(kept.length).toBe(Math.min(n, 60));
        // the first ones stay the first ones, the last ones are the latest
        if (n > 60) {
          expect(kept.slice(0, 20).map((e) => e.duration_ms)).toEqual(Array.from({ length: 20 }, (_, i) => i));
          expect(kept.slice(20).map((e) => e.duration_ms)).toEqual(Array.from({ length: 40 }, (_, i) => n - 40 + i));
        }
      }),
    );
  });
});

describe("the view", () => {
  it("lists every step in order, pending ones too, with their exchanges, quirks explained and durations", () => {
    const v = provisioningView(
      workflow([
        record("discover", "succeeded", { attempts: 1, exchanges: [{ ...ex(1), quirk: "session_expired" }], exchanges_omitted: 3 }),
        record("power_off", "running", { attempts: 2 }),
      ]),
    );
    expect(v).toMatchObject({ status: "running", phase: "redfish", image_url: "https://images.example/a.iso", current_step: "power_off" });
    expect(v.steps.map((s) => [s.name, s.status])).toEqual(
      PROVISIONING_STEPS.map((n, i) => [n, i === 0 ? "succeeded" : i === 1 ? "running" : "pending"]),
    );
    expect(v.steps[0]).toMatchObject({ duration_ms: 1500, attempts: 1, exchanges_omitted: 3, lease_token: "7" });
    expect(v.steps[0]!.exchanges[0]!.quirk_reason).toMatch(/log in once more/);
    expect(v.steps[1]).toMatchObject({ duration_ms: null, attempts: 2, exchanges: [] });
    expect(v.steps[2]).toMatchObject({ status: "pending", started_at: null, exchanges: [] });
  });
  it("once its own steps are done, follows the inspection recorded on the same workflow", () => {
    const done = PROVISIONING_STEPS.map((n) => record(n, "succeeded"));
    const v = provisioningView(workflow([...done, record("attest", "running")]));
    expect(v).toMatchObject({ phase: "inspection", current_step: "attest" });
    expect(v.steps.map((s) => s.name)).toEqual([...PROVISIONING_STEPS, "attest"]);
    expect(v.steps.at(-1)).toMatchObject({ label: "Inspection: attest", status: "running" });
    expect(provisioningView(workflow(done, { status: "succeeded", finishedAt: t0 }))).toMatchObject({ phase: "ended", current_step: null });
  });

  it("names a failure by its kind and step, and reads nothing it does not know as one", () => {
    const failed = workflow([record("discover", "failed")], {
      status: "failed",
      outcome: "x",
      finishedAt: t0,
      details: { image_url: "https://i/a.iso", failure: { kind: "credentials_refused", step: "discover" } },
    });
    expect(provisioningView(failed)).toMatchObject({ failure: { kind: "credentials_refused", step: "discover" }, current_step: null });
    expect(provisioningView({ ...failed, details: { failure: { kind: "lightning", step: "discover" } } }).failure).toBeNull();
  });
});

describe("the image URL", () => {
  const issue = (image_url: unknown) => provisionBody.safeParse({ image_url }).error?.issues[0]?.message;
  it("is an http(s) URL without credentials or spaces", () => {
    expect(issue("https://images.example/a.iso")).toBeUndefined();
    expect(issue("http://10.0.0.5/images/a.iso?sig=x")).toBeUndefined();
    expect(issue("ftp://images.example/a.iso")).toMatch(/http/);
    expect(issue("https://user:pw@images.example/a.iso")).toMatch(/credentials/);
    expect(issue("not a url")).toMatch(/full http/);
    expect(issue("")).toBeDefined();
    expect(issue(`https://x/${"a".repeat(2100)}`)).toMatch(/2048/);
    expect(issue(42)).toBeDefined();
  });
});
