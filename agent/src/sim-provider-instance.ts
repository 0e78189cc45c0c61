// A simulated provider instance: what a rented machine does once its start script ran — one node
// agent with the environment the provider handed it (GPUFORGE_URL, GPUFORGE_AGENT_KEY bound to this
// node, GPUFORGE_HOSTNAME), the instance's GPUs, and the fleet simulator's behaviour (registers,
// heartbeats, runs what it is assigned, reports exits fenced). The provider stand-ins call this
// when an instance "boots"; stopping it is the machine going away (an interruption).
import { startSimulator } from "./simulator";
import { gpuProfile } from "./sim-signals";

export interface SimulatedInstance {
  hostname: string;
  ready: Promise<void>;
  stop(): void;
}

export function bootSimulatedInstance(opts: {
  env: Record<string, string | undefined>;
  gpuType: string;
  gpuCount: number;
  stateDir: string;
  heartbeatS?: number;
  log?: (m: string) => void;
}): SimulatedInstance {
  const url = opts.env.GPUFORGE_URL;
  const key = opts.env.GPUFORGE_AGENT_KEY;
  const hostname = opts.env.GPUFORGE_HOSTNAME;
  if (!url || !key || !hostname) throw new Error("a burst instance boots with GPUFORGE_URL, GPUFORGE_AGENT_KEY and GPUFORGE_HOSTNAME");
  // a GPU the simulator has no profile for draws like an H100 (a mapped provider type under another name)
  let profile: { memoryMb: number; tdpW: number };
  try {
    profile = gpuProfile(opts.gpuType);
  } catch {
    profile = { memoryMb: 81_559, tdpW: 700 };
  }
  const sim = startSimulator({
    baseUrl: url,
    clusters: [
      {
        clusterId: hostname,
        key,
        gpuType: opts.gpuType,
        ...profile,
        pods: 1,
        racksPerPod: 1,
        nodesPerRack: 1,
        hostname,
        gpusPerNode: opts.gpuCount,
      },
    ],
    heartbeatS: opts.heartbeatS ?? 2,
    metricsS: opts.heartbeatS ?? 2,
    outputEveryS: 1,
    // one directory for every instance the caller boots: their addresses come from one book (agent/src/sim-addresses.ts),
    // so no two instances register the same one; each node keeps its own state under <cluster>/<hostname> there
    stateDir: opts.stateDir,
    log: opts.log ?? (() => {}),
  });
  return { hostname, ready: sim.ready, stop: () => sim.stop() };
}
