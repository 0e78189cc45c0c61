// What the fleet simulator's hardware and containers report, as pure functions of what runs on
// them: endpoint traffic on a slow wave, serving samples whose latency rises with load, and the
// exit a simulated container ends with.
import { createHash } from "node:crypto";

/** Seconds a simulated replica takes to load its model before it reports healthy. */
export const SIM_MODEL_LOAD_S = 6;

export const noise = (spread: number) => (Math.random() * 2 - 1) * spread;

/** Requests per second an endpoint receives at time t: its own base rate on a ten-minute wave. */
export function simulatedEndpointLoad(endpointId: string, t: number): number {
  const h = createHash("sha256").update(endpointId).digest();
  const base = 6 + (h[0]! % 15);
  const phase = (h[1]! / 255) * 2 * Math.PI;
  return base * (1 + 0.5 * Math.sin((2 * Math.PI * t) / 600_000 + phase));
}

/** One serving sample of a replica carrying `rps` requests per second over `seconds`. */
export function simulatedReplicaSample(replicaId: string, rps: number, seconds: number, at: string) {
  const requests = Math.max(0, Math.round(rps * seconds + noise(1)));
  const p50 = 80 + 7 * rps + noise(4);
  const p95 = p50 * 2.1 + noise(10);
  return {
    replica_id: replicaId,
    recorded_at: at,
    requests,
    errors: Math.random() < 0.05 ? Math.min(requests, 1) : 0,
    p50_ms: Math.round(Math.max(1, p50)),
    p95_ms: Math.round(Math.max(p50, p95)),
    p99_ms: Math.round(Math.max(p50, p95) * 1.45),
    tokens_per_s: Math.round(rps * 170),
  };
}

/**
 * The exit code a simulated container ends with: a command that ends in `exit N` fails with N
 * (how a workload asks the simulator for a failing run), anything else succeeds.
 */
export function simulatedExitCode(command: string | undefined): number {
  const m = command ? /(?:^|[;&|]\s*)exit\s+(\d{1,3})\s*$/.exec(command) : null;
  return m ? Number(m[1]) : 0;
}

const GPU_PROFILES: Record<string, { memoryMb: number; tdpW: number }> = {
  H100: { memoryMb: 81_559, tdpW: 700 },
  H200: { memoryMb: 143_771, tdpW: 700 },
  A100: { memoryMb: 81_920, tdpW: 400 },
  L40S: { memoryMb: 46_068, tdpW: 350 },
  B200: { memoryMb: 183_359, tdpW: 1_000 },
};

export function gpuProfile(gpuType: string): { memoryMb: number; tdpW: number } {
  const p = GPU_PROFILES[gpuType];
  if (!p) throw new Error(`the simulator has no profile for GPU type ${gpuType} (known: ${Object.keys(GPU_PROFILES).join(", ")})`);
  return p;
}
