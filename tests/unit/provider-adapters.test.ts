import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lambdaAdapter } from "@/lib/providers/lambda/adapter";
import { runpodAdapter } from "@/lib/providers/runpod/adapter";
import { startScript } from "@/lib/providers/start-script";
import { isProviderError, type LaunchSpec, type ProviderAdapter, type ProviderError } from "@/lib/providers/types";
import { vastAdapter } from "@/lib/providers/vast/adapter";
import type { Booted, Fault } from "../support/provider-standins/base";
import { startLambdaStandIn } from "../support/provider-standins/lambda";
import { startRunpodStandIn } from "../support/provider-standins/runpod";
import { startVastStandIn } from "../support/provider-standins/vast";
import { E2E_BUNDLE_PUBLIC_KEY } from "../support/bundle-signing-key";

// Each adapter against a local server that speaks its provider's documented API, including its
// failures: capacity, 5xx, 429 with Retry-After, a call that never answers, a dropped connection,
// a refused key, an instance taken back by the provider. The stand-ins know nothing of the client.

interface World {
  adapter: ProviderAdapter;
  booted: Booted[];
  faults: { add(op: string, f: Fault, times?: number): void; clear(): void };
  interrupt(id: string): void;
  live(): unknown[];
  key: string;
  log: Array<{ authorization: string | undefined; path: string }>;
  close(): Promise<void>;
  wrongKey(): ProviderAdapter;
  /** the same adapter with a 400 ms deadline, for the call that never answers */
  impatient(): ProviderAdapter;
}

async function waitFor(ok: () => boolean | Promise<boolean>, o: { timeoutMs?: number } = {}) {
  const end = Date.now() + (o.timeoutMs ?? 15_000);
  while (!(await ok())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const spec = (offer: LaunchSpec["offer"], id = "0b3c"): LaunchSpec => ({
  name: `gpuforge-${id}`,
  offer,
  env: { GPUFORGE_URL: "http://127.0.0.1:9", GPUFORGE_AGENT_KEY: "gf_" + "k".repeat(43), GPUFORGE_HOSTNAME: `runpod-${id}` },
  startScript: startScript(E2E_BUNDLE_PUBLIC_KEY),
});

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    if (isProviderError(e)) return e;
    throw e;
  }
  throw new Error("expected a ProviderError");
}

const worlds: Record<string, () => Promise<World>> = {
  runpod: async () => {
    const booted: Booted[] = [];
    const s = await startRunpodStandIn({ onBoot: (b) => void booted.push(b), bootMs: 30 });
    const make = (key: string, timeoutMs = 10_000) =>
      runpodAdapter({ url: s.url, key, timeoutMs, image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04" });
    return {
      adapter: make(s.key),
      impatient: () => make(s.key, 400),
      wrongKey: () => make("rp_wrong"),
      booted,
      faults: s.faults,
      interrupt: (id) => s.interrupt(id),
      live: () => s.live(),
      key: s.key,
      log: s.log,
      close: () => s.close(),
    };
  },
  lambda: async () => {
    const booted: Booted[] = [];
    const s = await startLambdaStandIn({ onBoot: (b) => void booted.push(b), bootMs: 30 });
    const make = (key: string, timeoutMs = 10_000) => lambdaAdapter({ url: s.url, key, timeoutMs, sshKeyName: "gpuforge" });
    return {
      adapter: make(s.key),
      impatient: () => make(s.key, 400),
      wrongKey: () => make("secret_wrong"),
      booted,
      faults: s.faults,
      interrupt: (id) => s.interrupt(id),
      live: () => s.live(),
      key: s.key,
      log: s.log,
      close: () => s.close(),
    };
  },
  vast: async () => {
    const booted: Booted[] = [];
    const s = await startVastStandIn({ onBoot: (b) => void booted.push(b), bootMs: 30 });
    const make = (key: string, timeoutMs = 10_000) =>
      vastAdapter({ url: s.url, key, timeoutMs, image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04" });
    return {
      adapter: make(s.key),
      impatient: () => make(s.key, 400),
      wrongKey: () => make("vastwrong"),
      booted,
      faults: s.faults,
      interrupt: (id) => s.interrupt(id),
      live: () => s.live(),
      key: s.key,
      log: s.log,
      close: () => s.close(),
    };
  },
};

for (const [name, make] of Object.entries(worlds)) {
  describe(`${name} adapter`, () => {
    let w: World;
    beforeAll(async () => {
      w = await make();
    });
    afterAll(() => w.close());

    it("lists offers in our terms: whole cents per GPU-hour, a region, a GPU count", async () => {
      const offers = await w.adapter.listOffers();
      expect(offers.length).toBeGreaterThan(0);
      for (const o of offers) {
        expect(Number.isInteger(o.costCentsPerGpuHour) && o.costCentsPerGpuHour > 0).toBe(true);
        expect(o.gpuCount).toBeGreaterThanOrEqual(1);
        expect(o.region).not.toBe("");
        expect(o.offerId).not.toBe("");
      }
      // the key went as a bearer header, never into a URL
      expect(w.log.every((l) => l.authorization === `Bearer ${w.key}` && !l.path.includes(w.key))).toBe(true);
    });

    it("launches, reports booting then running, hands the instance its environment, and terminates (twice is fine)", async () => {
      const offer = (await w.adapter.listOffers()).find((o) => !o.interruptible)!;
      const { externalId } = await w.adapter.launch(spec(offer));
      const first = await w.adapter.status(externalId);
      expect(["booting", "running"]).toContain(first.state);
      await waitFor(async () => (await w.adapter.status(externalId)).state === "running", { timeoutMs: 15_000 });
      await waitFor(() => w.booted.some((b) => b.id === externalId));
      const b = w.booted.find((x) => x.id === externalId)!;
      expect(b.env.GPUFORGE_HOSTNAME).toBe("runpod-0b3c");
      expect(b.env.GPUFORGE_AGENT_KEY).toMatch(/^gf_k{43}$/);
      expect((await w.adapter.listInstances()).map((i) => i.externalId)).toContain(externalId);
      await w.adapter.terminate(externalId);
      expect((await w.adapter.status(externalId)).state).toBe("gone");
      await expect(w.adapter.terminate(externalId)).resolves.toBeUndefined();
    });

    it("reports an instance the provider took back as interrupted (or gone)", async () => {
      const offer = (await w.adapter.listOffers())[0]!;
      const { externalId } = await w.adapter.launch(spec(offer, "1c2d"));
      w.interrupt(externalId);
      expect(["interrupted", "gone"]).toContain((await w.adapter.status(externalId)).state);
      await w.adapter.terminate(externalId);
    });

    it("turns the provider's capacity answer into a capacity error", async () => {
      const offer = (await w.adapter.listOffers())[0]!;
      w.faults.add("launch", { kind: "capacity" });
      const e = await rejection(w.adapter.launch(spec(offer)));
      expect(e.kind).toBe("capacity");
    });

    it("5xx is unavailable; 429 is rate limited with its Retry-After; a hang and a dropped connection are unavailable", async () => {
      w.faults.add("launch", { kind: "status", status: 503, body: { message: "upstream" } });
      const offer = (await w.adapter.listOffers())[0]!;
      expect((await rejection(w.adapter.launch(spec(offer)))).kind).toBe("unavailable");
      w.faults.add("offers", { kind: "status", status: 429, body: {}, headers: { "retry-after": "17" } });
      w.faults.add("catalog", { kind: "status", status: 429, body: {}, headers: { "retry-after": "17" } });
      const limited = await rejection(w.adapter.listOffers());
      expect(limited.kind).toBe("rate_limited");
      expect(limited.retryAfterS).toBe(17);
      w.faults.clear();
      w.faults.add("status", { kind: "hang" });
      const hung = await rejection(w.impatient().status("123"));
      expect(hung.kind).toBe("unavailable");
      expect(hung.message).toMatch(/no answer within 400 ms/);
      w.faults.add("terminate", { kind: "reset" });
      expect((await rejection(w.adapter.terminate("123"))).kind).toBe("unavailable");
    });

    it("a refused key is an auth error whose message carries no key", async () => {
      const e = await rejection(w.wrongKey().listOffers());
      expect(e.kind).toBe("auth");
      expect(e.message).not.toContain(w.key);
      expect(e.message).not.toMatch(/wrong/);
    });

    it("an unknown instance is gone, not an error", async () => {
      expect((await w.adapter.status(name === "vast" ? "4242" : "nope")).state).toBe("gone");
    });
  });
}

describe("provider specifics", () => {
  it("Vast: the instance list moves to v1 when v0 answers 410 deprecated_endpoint", async () => {
    const s = await startVastStandIn({ v0ListDeprecated: true });
    try {
      const a = vastAdapter({ url: s.url, key: s.key, timeoutMs: 10_000, image: "x/y:1" });
      expect(await a.listInstances()).toEqual([]);
      expect(s.log.map((l) => l.path)).toEqual(["/api/v0/instances/", "/api/v1/instances/"]);
    } finally {
      await s.close();
    }
  });

  it("Lambda: refuses to launch without the one SSH key Lambda requires, before asking", async () => {
    const s = await startLambdaStandIn();
    try {
      const a = lambdaAdapter({ url: s.url, key: s.key, timeoutMs: 10_000, sshKeyName: undefined });
      const offer = (await a.listOffers())[0]!;
      const e = await rejection(a.launch(spec(offer)));
      expect(e.kind).toBe("rejected");
      expect(s.log.some((l) => l.operation === "launch")).toBe(false);
    } finally {
      await s.close();
    }
  });

  it("RunPod: spot offers launch as interruptible pods with a bid; a bid under the minimum is refused", async () => {
    const s = await startRunpodStandIn();
    try {
      const a = runpodAdapter({ url: s.url, key: s.key, timeoutMs: 10_000, image: "x/y:1" });
      const spot = (await a.listOffers()).find((o) => o.interruptible)!;
      expect(spot.costCentsPerGpuHour).toBe(175);
      const { externalId } = await a.launch(spec(spot));
      expect(s.pods.get(externalId)?.podType).toBe("INTERRUPTABLE");
      const e = await rejection(a.launch(spec({ ...spot, costCentsPerGpuHour: 10 })));
      expect(e.kind).toBe("rejected");
    } finally {
      await s.close();
    }
  });
});
