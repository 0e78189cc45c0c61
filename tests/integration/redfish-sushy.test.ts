import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSimBmc, type SimBmc } from "../../agent/src/sim-bmc";
import { ensureSystemTool } from "../support/system-packages";

// Conformance of the simulated BMC (agent/src/sim-bmc.ts) with a Redfish client nobody here wrote:
// OpenStack's sushy (Debian's python3-sushy, for Debian's /usr/bin/python3), driving power, the
// one-time boot override and virtual media insert/eject the way Ironic does, with each of its
// authentication modes. The simulator's state is read back directly to check what sushy did.

const run = promisify(execFile);
const DRIVER = path.join(import.meta.dirname, "../support/sushy-drive.py");
const IMAGE = "http://images.example/gpuforge-installer.iso";
const bmcs: SimBmc[] = [];

beforeAll(() => ensureSystemTool("sushy"));
afterEach(async () => {
  await Promise.all(bmcs.splice(0).map((b) => b.close()));
});

async function drive(b: SimBmc, auth: "session" | "basic" | "either", password = b.password) {
  // sushy runs in its own process: this one keeps serving the simulated BMC meanwhile
  const r = await run("/usr/bin/python3", [DRIVER, b.url, b.username, password, auth, IMAGE], { timeout: 60_000 }).catch(
    (e: { stdout?: string; code?: number }) => ({ stdout: e.stdout ?? "", code: e.code }),
  );
  return r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("sushy drives the simulated BMC", () => {
  for (const auth of ["session", "basic", "either"] as const) {
    it(`power, boot override and virtual media with ${auth} auth`, async () => {
      const booted: unknown[] = [];
      const b = await startSimBmc({
        hostname: `sushy-${auth}`,
        timing: { powerMs: 50, bootMs: 50, taskMs: 200 },
        on: { booted: (e) => booted.push(e) },
      });
      bmcs.push(b);
      const steps = await drive(b, auth);
      const by = Object.fromEntries(steps.map((s) => [s.step, s]));
      expect(steps.map((s) => s.step)).toEqual([
        "connect",
        "system",
        "power_off",
        "eject",
        "insert",
        "boot_override",
        "power_on",
        "eject_again",
      ]);
      expect(by.connect).toMatchObject({ session: auth !== "basic" });
      // found through the collection: the system's id is the simulator's, not "1"
      expect(by.system).toMatchObject({ path: `/redfish/v1/Systems/${b.systemId}`, identity: b.systemId, power: "On" });
      expect(b.systemId).not.toBe("1");
      expect(by.system!.resets).toEqual(expect.arrayContaining(["On", "ForceOff", "ForceRestart", "GracefulShutdown"]));
      expect(by.power_off).toMatchObject({ power: "Off" });
      expect(by.eject).toMatchObject({ media: "CD1", inserted: false, image: null });
      // sushy's InsertMedia answered 202 (a task); the image shows once the task mounted it
      expect(by.insert).toMatchObject({ media: "CD1", inserted: true, image: IMAGE });
      expect(by.boot_override).toMatchObject({ enabled: "Once", target: "Cd" });
      expect(by.power_on).toMatchObject({ power: "On" });
      expect(by.eject_again).toMatchObject({ inserted: false, image: null });
      // the power-on booted from the virtual CD (the override was used once, then cleared)
      await expect.poll(() => booted).toEqual([{ from: "Cd", image: IMAGE }]);
      expect(b.state.boot).toMatchObject({ enabled: "Disabled" });
      // sushy's PATCH carried the ETag the simulator sent (a stale one is answered 412)
      expect(b.requests.PATCH).toBe(1);
      // sushy logged out when it was done (DELETE of its session)
      expect(b.sessions()).toBe(0);
    });
  }

  it("sushy hears a wrong password as an access error", async () => {
    const b = await startSimBmc({ hostname: "sushy-refused" });
    bmcs.push(b);
    const steps = await drive(b, "session", "not-the-password");
    expect(steps).toEqual([expect.objectContaining({ step: "error", kind: "AccessError" })]);
  });
});
