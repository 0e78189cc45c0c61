import type { SimBmcTiming } from "./sim-bmc-state";
import { startSimBmc, type SimBmc, type SimBmcFault } from "./sim-bmc";

// The simulated fleet's BMCs: one Redfish service per simulated node, on the node's own loopback
// address, wired to the node's life. Powering the system off kills the node (its agent goes
// silent, its containers die with it); the boot that follows a power-on brings the agent back to
// register again, whether it booted the provisioning image from the virtual CD or its own disk.
// Half the BMCs keep their virtual media on the Manager and list ResetType inline, the other half
// keep it on the System and list ResetType through an ActionInfo: clients must discover both.

export interface SimBmcFleetOptions {
  /** one password for every simulated BMC (a random one each when unset) */
  password?: string;
  timing?: Partial<SimBmcTiming>;
}

export interface SimBmcEntry {
  hostname: string;
  url: string;
  username: string;
  password: string;
}

export async function startSimBmcFleet(
  nodes: ReadonlyArray<{ hostname: string; address: string }>,
  hooks: { powerOff(hostname: string): void; booted(hostname: string, from: string, image: string | null): void },
  opts: SimBmcFleetOptions = {},
) {
  const bmcs = new Map<string, SimBmc>();
  // a few at a time: a large fleet's BMCs come up in seconds
  const queue = nodes.map((n, i) => ({ ...n, i }));
  await Promise.all(
    Array.from({ length: Math.min(16, queue.length) }, async () => {
      for (let n = queue.shift(); n; n = queue.shift()) {
        const node = n;
        const bmc = await startSimBmc({
          hostname: node.hostname,
          address: node.address,
          ...(opts.password ? { password: opts.password } : {}),
          mediaOn: node.i % 2 === 0 ? "Manager" : "System",
          resetInfo: node.i % 2 === 0 ? "inline" : "action_info",
          timing: { powerMs: 500, bootMs: 4_000, taskMs: 1_500, ...opts.timing },
          on: {
            power: (state) => state === "Off" && hooks.powerOff(node.hostname),
            booted: (e) => hooks.booted(node.hostname, e.from, e.image),
          },
        });
        bmcs.set(node.hostname, bmc);
      }
    }),
  );
  return {
    bmcs,
    list: (): SimBmcEntry[] =>
      [...bmcs.entries()].map(([hostname, b]) => ({ hostname, url: b.url, username: b.username, password: b.password })),
    fault: async (hostname: string, kind: SimBmcFault): Promise<boolean> => {
      const b = bmcs.get(hostname);
      if (!b) return false;
      await b.fault(kind);
      return true;
    },
    stop: () => Promise.all([...bmcs.values()].map((b) => b.close())),
  };
}
